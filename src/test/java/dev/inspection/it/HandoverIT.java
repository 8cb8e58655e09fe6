package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.inspection.node.Node;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A stopping worker hands its leases back (D6) and Redis tells the others at once (an accelerator only). */
class HandoverIT {

  @Test
  void gracefulStopHandsSlotsToAnotherWorkerWithoutWaitingForExpiryOrPolling() throws Exception {
    try (TestEnv env = new TestEnv(4)) {
      String probeId = env.name + "-probe";
      Node a = env.start(Map.of("role", "worker", "node.id", env.name + "-a"));
      env.awaitConsuming();
      // b reads its leases only every 10 minutes: only the Redis notification can make it take over quickly
      Node b = env.start(Map.of("role", "worker", "node.id", env.name + "-b", "worker.lease.poll.ms", "600000"));
      Node probe = env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "200", "probe.interval.ms", "300"));
      awaitTrue(Duration.ofSeconds(30), "results flowing", () -> env.queryLong("SELECT count(*) FROM $S.device_status_history") > 400);

      long start = System.nanoTime();
      env.stop(a);
      awaitTrue(Duration.ofSeconds(20), "b holds every slot", () -> b.worker().heldSlots().size() == 4);
      env.awaitConsuming();
      System.out.printf("handover of 4 slots after a graceful stop: %d ms%n", (System.nanoTime() - start) / 1_000_000);
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.slot_lease WHERE owner_worker_id <> '" + env.name + "-b'"));
      assertEquals("OFFLINE", env.query("SELECT state FROM $S.worker_heartbeat WHERE worker_id = '" + env.name + "-a'").get(0)[0]);

      env.drainAndBalance(probe, probeId, Map.of());
    }
  }
}
