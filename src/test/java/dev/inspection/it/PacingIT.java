package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.inspection.node.Node;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 14 item 2: probes pace by default. A probe starts at the cold-start pace (a quarter) rather than at
 * full speed, and follows whichever scheduler it reaches: its own in {@code --role=all}, or the leader's
 * announcement on Redis when it has no {@code probe.inventory.url}. (The URL path is in ControlPlaneIT.)
 */
class PacingIT {
  /** The defaults TestEnv switches off for the other tests: cold-start pace, three workers for full speed. */
  private static final Map<String, String> PACED = Map.of("probe.pacing.start", "0.25", "scheduler.min.workers", "3",
      "probe.pacing.refresh.ms", "200");

  private static Map<String, String> paced(String... kv) {
    Map<String, String> m = new java.util.HashMap<>(PACED);
    for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
    return m;
  }

  @Test
  void aProbeThatReachesNoSchedulerStartsAtTheColdStartPace() throws Exception {
    try (TestEnv env = new TestEnv(2).withoutScheduler()) {
      Node probe = env.start(paced("role", "probe", "node.id", env.name + "-probe", "probe.sim.devices", "10", "redis.url", "redis://127.0.0.1:1"));
      assertEquals(0.25, probe.probe().pace(), "not full speed");
    }
  }

  @Test
  void aProbeWithoutASchedulerUrlFollowsTheLeaderOverRedis() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      env.start(paced("role", "scheduler", "node.id", env.name + "-sched"));
      Node probe = env.start(paced("role", "probe", "node.id", env.name + "-probe", "probe.sim.devices", "10"));
      assertEquals(0.25, probe.probe().pace(), "starts at the cold-start pace");
      env.start(paced("role", "worker", "node.id", env.name + "-w1"));
      awaitTrue(Duration.ofSeconds(20), "pace 50% with one ACTIVE worker, heard over Redis", () -> probe.probe().pace() == 0.5);
    }
  }

  @Test
  void aProbeInRoleAllFollowsItsOwnScheduler() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      // its Redis leads nowhere: only its own scheduler can tell it the pace
      Node all = env.start(paced("role", "all", "node.id", env.name + "-all", "probe.sim.devices", "10", "redis.url", "redis://127.0.0.1:1"));
      awaitTrue(Duration.ofSeconds(30), "pace 50% with its own worker ACTIVE", () -> all.probe().pace() == 0.5);
    }
  }
}
