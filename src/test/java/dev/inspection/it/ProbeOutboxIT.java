package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.node.Node;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The outbox is the backpressure buffer and the crash log: nothing the probe produced is lost. */
class ProbeOutboxIT {

  @Test
  void fullQueueRefusesPublishesAndRowsWaitInTheOutboxUntilThereIsRoom() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      String probeId = env.name + "-probe";
      Map<String, String> small = Map.of("broker.queue.budget.bytes", "80000", "broker.queue.high.weight", "1", "outbox.publish.batch.bytes", "4096");
      Node probe = env.start(with(small, "role", "probe", "node.id", probeId, "probe.sim.devices", "200", "probe.interval.ms", "300"));
      awaitTrue(Duration.ofSeconds(60), "the broker refuses publishes and rows pile up unconfirmed",
          () -> probe.metrics().count("outbox_nacks_total") > 0 && env.outboxUnconfirmed(probeId) > 300);
      long waiting = env.outboxUnconfirmed(probeId);

      env.start(with(small, "role", "worker", "node.id", env.name + "-w"));
      Ledger.Report r = env.drainAndBalance(probe, probeId, small);
      assertTrue(r.produced() >= waiting, r.toString());
    }
  }

  @Test
  void replayAfterKill9DeliversEveryUnconfirmedRowOnce() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      String probeId = env.name + "-probe";
      Map<String, String> small = Map.of("broker.queue.budget.bytes", "80000", "broker.queue.high.weight", "1", "outbox.publish.batch.bytes", "4096");
      // no worker yet: the queues fill up, so the probe holds unconfirmed rows when it dies
      ChildNode probe = ChildNode.start(env, "probe-1", with(small, "role", "probe", "node.id", probeId, "probe.sim.devices", "300",
          "probe.interval.ms", "300"));
      // more than one read of the publisher (1,000 rows), so the replay must walk a real backlog
      awaitTrue(Duration.ofSeconds(60), "unconfirmed rows in the outbox", () -> env.outboxUnconfirmed(probeId) > 2500);
      probe.kill9();
      long unconfirmed = env.outboxUnconfirmed(probeId);
      assertTrue(unconfirmed > 2500, "rows were left unconfirmed by the kill: " + unconfirmed);

      env.start(with(small, "role", "worker", "node.id", env.name + "-w"));
      long seqBefore = env.produced(probeId).stream().filter(p -> p.deviceId().equals("sim-000001")).mapToLong(Ledger.Produced::seq).max().orElse(0);
      // a probe with no devices: only its replay can move the backlog, one read of 1,000 rows at a time
      // (a small in-flight window and a fast replay timer make replay passes land between forward reads)
      try (ChildNode replay = ChildNode.start(env, "probe-2", with(small, "role", "probe", "node.id", probeId, "probe.sim.devices", "0",
          "outbox.max.inflight", "50", "outbox.replay.interval.ms", "50", "outbox.replay.min.age.ms", "100"))) {
        env.awaitDelivered(probeId, Duration.ofSeconds(90));
      }
      // inspecting again after the crash continues every device's seq above what was handed out before
      try (ChildNode again = ChildNode.start(env, "probe-3", with(small, "role", "probe", "node.id", probeId, "probe.sim.devices", "300",
          "probe.interval.ms", "300"))) {
        awaitTrue(Duration.ofSeconds(60), "new results after the restart", () -> env.produced(probeId).stream()
            .anyMatch(p -> p.deviceId().equals("sim-000001") && p.seq() > seqBefore));
        again.terminate(Duration.ofSeconds(30));
      }
      try (ChildNode last = ChildNode.start(env, "probe-4", with(small, "role", "probe", "node.id", probeId, "probe.sim.devices", "0"))) {
        env.awaitDelivered(probeId, Duration.ofSeconds(90));
      }
      Ledger.Report r = env.ledger(probeId);
      assertTrue(r.clean(), r.toString());
      assertEquals(r.produced(), r.stored(), "each result once in history");
      // (device, seq) never reused: message ids are unique per (device, cycle, seq) and every produced id is stored once
      assertEquals(r.produced(), env.queryLong("SELECT count(DISTINCT (device_id, seq)) FROM $S.device_status_history"));
    }
  }

  static Map<String, String> with(Map<String, String> base, String... kv) {
    Map<String, String> m = new HashMap<>(base);
    for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
    return m;
  }
}
