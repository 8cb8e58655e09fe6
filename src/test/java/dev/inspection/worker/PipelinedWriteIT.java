package dev.inspection.worker;

import static dev.inspection.it.TestEnv.awaitResult;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.it.TestEnv;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.state.AlertRules;
import dev.inspection.state.PayloadProfiles;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * The batch's current and history statements go out together on one connection ({@link BatchStore}): PostgreSQL still runs them
 * in order, and a refusal of either fails the batch with that statement's own error (never the "transaction is aborted" of the
 * one after it), with nothing of the batch written. The worker's split of a refused batch (D9) reads that error.
 */
class PipelinedWriteIT {
  @Test
  void aRefusalOfEitherStatementFailsTheBatchWithItsOwnErrorAndWritesNothing() throws Exception {
    try (TestEnv env = new TestEnv(1); AgedSchema db = AgedSchema.open(env)) {
      env.execute("UPDATE $S.slot_lease SET owner_worker_id = 'w', lease_epoch = 1, state = 'ACTIVE'");
      long cycle = System.currentTimeMillis() - 60_000;
      for (String mode : List.of("custom", "generic")) {
        BatchStore store = new BatchStore(db.pool(), "w", Clock.systemUTC(), mode.equals("generic") ? 16 : 0);
        // the first statement refuses
        env.execute("ALTER TABLE $S.device_status_current ADD CONSTRAINT it_refuse_current CHECK (NOT (status_payload ? 'refuse_me'))");
        PgException first = refused(store, batch("p-" + mode + "-1", cycle, true));
        assertEquals("23514", first.getSqlState(), mode + ": " + first.getMessage());
        assertTrue(first.getMessage().contains("it_refuse_current"), first.getMessage());
        env.execute("ALTER TABLE $S.device_status_current DROP CONSTRAINT it_refuse_current");
        // the second refuses
        env.execute("ALTER TABLE $S.device_status_history ADD CONSTRAINT it_refuse_history CHECK (NOT (status_payload ? 'refuse_me'))");
        PgException second = refused(store, batch("p-" + mode + "-2", cycle + 10, true));
        assertEquals("23514", second.getSqlState(), mode + ": " + second.getMessage());
        assertTrue(second.getMessage().contains("it_refuse_history"), second.getMessage());
        env.execute("ALTER TABLE $S.device_status_history DROP CONSTRAINT it_refuse_history");
        assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_current"), mode + ": nothing of a refused batch in current");
        assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_history"), mode + ": nor in history");
        assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_rollup_1m"), mode + ": nor in the rollups");
      }
      // and a good batch on the same connection afterwards writes all three
      BatchStore store = new BatchStore(db.pool(), "w", Clock.systemUTC(), 16);
      Map<Integer, BatchStore.Outcome> out = awaitResult(store.commit(batch("p-ok", cycle + 20, false)));
      assertTrue(out.get(0) instanceof BatchStore.Committed c && c.currentRows() == 3 && c.historyRows() == 3, "committed: " + out);
    }
  }

  /** Three devices of slot 0, the middle one's payload refused when {@code poison}. */
  static List<BatchStore.Part> batch(String prefix, long cycle, boolean poison) {
    List<Envelope> es = new ArrayList<>();
    Map<String, DeviceDirectory.Info> infos = new HashMap<>();
    for (int i = 0; i < 3; i++) {
      String d = prefix + "-" + i;
      JsonObject payload = new JsonObject().put("status", "UP");
      if (poison && i == 1) payload.put("refuse_me", true);
      es.add(new Envelope(Envelope.messageId("n", cycle + i, d, 1), d, 0, 1, 1, 1, "n", cycle + i, 1, Instant.ofEpochMilli(cycle + i), Priority.NORMAL, payload));
      infos.put(d, new DeviceDirectory.Info(2, PayloadProfiles.DEFAULT, false));
    }
    return List.of(new BatchStore.Part(0, 1, StatePlanner.plan(es, new HashMap<>(), infos, AlertRules::forPriority)));
  }

  private static PgException refused(BatchStore store, List<BatchStore.Part> parts) throws Exception {
    try {
      awaitResult(store.commit(parts));
    } catch (ExecutionException e) {
      assertTrue(e.getCause() instanceof PgException, "a PostgreSQL error: " + e.getCause());
      return (PgException) e.getCause();
    }
    throw new AssertionError("the batch was not refused");
  }
}
