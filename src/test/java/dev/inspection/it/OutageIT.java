package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.inspection.control.FleetMode;
import dev.inspection.node.Node;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Short outages of the real services during a run (scripts/drill-outage.sh holds the 5-minute drills):
 * nothing acked while PostgreSQL is down, the outbox grows while RabbitMQ is down, and afterwards the
 * ledger balances — nothing lost, nothing stale, nothing twice.
 */
class OutageIT {

  @Test
  void postgresRestartDuringARunLosesNothing() throws Exception {
    assumeTrue(Services.available(), "needs root and the local service scripts");
    try (TestEnv env = new TestEnv(4)) {
      String probeId = env.name + "-probe";
      Node worker = env.start(Map.of("role", "worker", "node.id", env.name + "-w"));
      Node probe = env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "300", "probe.interval.ms", "500"));
      awaitTrue(Duration.ofSeconds(60), "results flowing", () -> env.queryLong("SELECT count(*) FROM $S.device_status_history") > 300);
      double committedBefore;
      try {
        Services.stopPostgres();
        awaitTrue(Duration.ofSeconds(60), "the worker noticed the outage and paused", () -> !worker.worker().ready());
        committedBefore = total(worker, "worker_committed_total");
        // while it is down nothing may be acked: results pile up in the queues
        awaitTrue(Duration.ofSeconds(60), "results wait in RabbitMQ", () -> env.readyTotal() > 200);
        assertEquals(committedBefore, total(worker, "worker_committed_total"), "nothing acked while PostgreSQL is down");
      } finally {
        Services.startPostgres();
      }
      awaitTrue(Duration.ofSeconds(90), "the worker resumed", () -> worker.worker().ready()
          && total(worker, "worker_committed_total") > committedBefore);
      env.drainAndBalance(probe, probeId, Map.of());
    }
  }

  @Test
  void rabbitRestartDuringARunLosesNothing() throws Exception {
    assumeTrue(Services.available(), "needs root and the local service scripts");
    try (TestEnv env = new TestEnv(4)) {
      String probeId = env.name + "-probe";
      env.start(Map.of("role", "worker", "node.id", env.name + "-w"));
      Node probe = env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "300", "probe.interval.ms", "500"));
      awaitTrue(Duration.ofSeconds(60), "results flowing", () -> env.queryLong("SELECT count(*) FROM $S.device_status_history") > 300);
      try {
        Services.stopRabbit();
        // issue 12: backpressure within 10 s of the failure — the lost connection is the probe's own signal (probe.mode.broker.down.ms)
        awaitTrue(Duration.ofSeconds(10), "the probe enters BACKPRESSURE_HIGH on its own", () -> probe.probe().mode().local() == FleetMode.BACKPRESSURE_HIGH);
        assertTrue(probe.metrics().count("probe_mode_changes_total", "source", "local", "to", "BACKPRESSURE_HIGH", "cause", "broker_down") >= 1);
        awaitTrue(Duration.ofSeconds(60), "the outbox grows while the broker is down", () -> !probe.probe().ready()
            && env.outboxUnconfirmed(probeId) > 300);
      } finally {
        Services.startRabbit();
      }
      awaitTrue(Duration.ofSeconds(90), "probe reconnected", () -> probe.probe().ready());
      awaitTrue(Duration.ofSeconds(90), "the probe leaves backpressure once its backlog is published", () -> probe.probe().mode().local() == FleetMode.NORMAL);
      env.drainAndBalance(probe, probeId, Map.of());
    }
  }

  private static double total(Node n, String counter) {
    return n.metrics().registry().find(counter).counters().stream().mapToDouble(c -> c.count()).sum();
  }
}
