package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.node.Node;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The whole path on the real services: probe → outbox → RabbitMQ → worker → PostgreSQL. */
class EndToEndIT {

  @Test
  void everyResultLandsExactlyOnceAndCurrentHoldsTheNewest() throws Exception {
    try (TestEnv env = new TestEnv(4)) {
      String probeId = env.name + "-probe";
      env.start(Map.of("role", "worker", "node.id", env.name + "-w1"));
      Node probe = env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "300", "probe.interval.ms", "400",
          "probe.sim.fail.rate", "0.3"));

      awaitTrue(Duration.ofSeconds(90), "every device has three results in history", () -> env.queryLong(
          "SELECT count(*) FROM (SELECT device_id FROM $S.device_status_history GROUP BY device_id HAVING count(*) >= 3) x") == 300);

      // results waiting together for one slot and priority travel as one v3 message
      double results = probe.metrics().count("outbox_published_total");
      double messages = probe.metrics().count("outbox_messages_total");
      assertTrue(messages >= 1 && messages < results, "messages " + messages + " for " + results + " results");

      // stop inspecting; a restarted probe with no devices replays whatever was left unconfirmed
      Ledger.Report report = env.drainAndBalance(probe, probeId, Map.of());
      assertTrue(report.produced() >= 900, report.toString());
      assertEquals(300, env.queryLong("SELECT count(*) FROM $S.device_status_current"));
      assertEquals(0, env.deadLetterCount());
    }
  }
}
