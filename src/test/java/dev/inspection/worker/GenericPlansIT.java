package dev.inspection.worker;

import static dev.inspection.it.TestEnv.awaitResult;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.it.TestEnv;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.state.AlertRules;
import dev.inspection.state.DerivedState;
import dev.inspection.state.PayloadProfiles;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code worker.generic.plan.max.results} against a real PostgreSQL whose tables have 60 past days of partitions: a small batch
 * transaction runs on the session's generic plans, a larger one and one with alert events plan for their values, and each
 * writes what it should. The plans a statement was run with are PostgreSQL's own counters of the one session
 * ({@code pg_prepared_statements}).
 */
class GenericPlansIT {
  private static final String COUNTS = """
      SELECT coalesce(sum(generic_plans), 0), coalesce(sum(custom_plans), 0) FROM pg_prepared_statements
      WHERE statement LIKE '%INSERT INTO device_status_history%'""";

  @Test
  void smallBatchesRunOnGenericPlansLargerOnesAndAlertsOnPlansForTheirValues() throws Exception {
    try (TestEnv env = new TestEnv(1); AgedSchema db = AgedSchema.open(env)) {
      Pool pool = db.pool(); // one connection: one session, whose counters these are
      env.execute("UPDATE $S.slot_lease SET owner_worker_id = 'w', lease_epoch = 1, state = 'ACTIVE'");
      BatchStore store = new BatchStore(pool, "w", Clock.systemUTC(), 4);
      Map<String, DerivedState> memory = new HashMap<>();
      long cycle = System.currentTimeMillis() - 60_000;

      // two batches of one UP result each (no alert event): generic plans
      for (int i = 0; i < 2; i++) commit(store, memory, List.of(result("g-" + i, cycle + i, "UP")));
      long[] afterSmall = counts(pool);
      assertEquals(2, afterSmall[0], "the history statement ran twice on its generic plan");
      assertEquals(0, afterSmall[1], "and was never planned for its values");

      // five results (over 4): planned for its values
      List<Envelope> five = new ArrayList<>();
      for (int i = 0; i < 5; i++) five.add(result("c-" + i, cycle + 10 + i, "UP"));
      commit(store, memory, five);
      long[] afterLarge = counts(pool);
      assertEquals(2, afterLarge[0]);
      assertEquals(1, afterLarge[1], "a batch above the limit is planned for its values");

      // one result whose device's alert fires: planned for its values (the alert events' partitions are pruned by the plan)
      String flapping = "a-1";
      boolean sawEvents = false;
      for (int i = 0; i < 8 && !sawEvents; i++) {
        StatePlanner.Plan plan = plan(List.of(result(flapping, cycle + 100 + i, "DOWN")), memory);
        sawEvents = !plan.events().isEmpty();
        long[] before = counts(pool);
        awaitResult(store.commit(List.of(new BatchStore.Part(0, 1, plan))));
        memory.putAll(plan.next());
        long[] after = counts(pool);
        if (sawEvents) assertEquals(before[1] + 1, after[1], "the batch with alert events was planned for its values");
        else assertEquals(before[0] + 1, after[0], "a one-result batch without events: generic");
      }
      assertTrue(sawEvents, "the offline alert fired within 8 DOWN results");

      // whatever the plans, the rows are there: every result in history, every device in current
      assertEquals(2 + 5 + env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id = '" + flapping + "'"),
          env.queryLong("SELECT count(*) FROM $S.device_status_history"));
      assertEquals(2 + 5 + 1, env.queryLong("SELECT count(*) FROM $S.device_status_current"));
      assertEquals(1, env.queryLong("SELECT sample_count FROM $S.device_status_rollup_1m WHERE device_id = 'g-0'"));
      assertFalse(env.query("SELECT 1 FROM $S.alert_event WHERE device_id = '" + flapping + "'").isEmpty(), "the alert's event is stored");
      // the session's own mode is untouched: set_config(..., true) lasts for the transaction only
      Row mode = awaitResult(pool.query("SELECT current_setting('plan_cache_mode')").execute()).iterator().next();
      assertEquals(BatchStore.CUSTOM_PLANS, mode.getString(0));
    }
  }

  private static Envelope result(String device, long cycle, String status) {
    return new Envelope(Envelope.messageId("n", cycle, device, 1), device, 0, 1, 1, 1, "n", cycle, 1, Instant.ofEpochMilli(cycle), Priority.NORMAL,
        new JsonObject().put("status", status));
  }

  private static StatePlanner.Plan plan(List<Envelope> batch, Map<String, DerivedState> memory) {
    Map<String, DeviceDirectory.Info> infos = new HashMap<>();
    for (Envelope e : batch) infos.put(e.deviceId(), new DeviceDirectory.Info(2, PayloadProfiles.DEFAULT, false));
    return StatePlanner.plan(batch, memory, infos, AlertRules::forPriority);
  }

  private static void commit(BatchStore store, Map<String, DerivedState> memory, List<Envelope> batch) throws Exception {
    StatePlanner.Plan plan = plan(batch, memory);
    assertTrue(plan.events().isEmpty(), "no alert event in " + batch.size() + " UP results");
    Map<Integer, BatchStore.Outcome> out = awaitResult(store.commit(List.of(new BatchStore.Part(0, 1, plan))));
    assertTrue(out.get(0) instanceof BatchStore.Committed, "committed: " + out);
    memory.putAll(plan.next());
  }

  private static long[] counts(Pool pool) throws Exception {
    Row r = awaitResult(pool.query(COUNTS).execute()).iterator().next();
    return new long[] {r.getLong(0), r.getLong(1)};
  }
}
