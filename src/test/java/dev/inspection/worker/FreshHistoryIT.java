package dev.inspection.worker;

import static dev.inspection.it.TestEnv.awaitResult;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.ManualClock;
import dev.inspection.it.TestEnv;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.state.AlertRules;
import dev.inspection.state.DerivedState;
import dev.inspection.state.PayloadProfiles;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * History takes a batch with a plain insert ({@link HistoryRollups#WRITE_FRESH}); a batch holding a result history already has
 * fails on the key and is written again at once with the insert-or-ignore ({@link BatchStore#commit}): the new results are
 * written, the held ones skipped, each result counted once in the rollups, and the store keeps to the insert-or-ignore for
 * {@link BatchStore#GUARDED_AFTER_DUPLICATE_MS}.
 */
class FreshHistoryIT {
  @Test
  void aBatchHoldingResultsHistoryHasCommitsItsNewResultsAndCountsEachResultOnce() throws Exception {
    try (TestEnv env = new TestEnv(1); AgedSchema db = AgedSchema.open(env)) {
      env.execute("UPDATE $S.slot_lease SET owner_worker_id = 'w', lease_epoch = 1, state = 'ACTIVE'");
      ManualClock clock = new ManualClock(System.currentTimeMillis());
      BatchStore store = new BatchStore(db.pool(), "w", clock, 0);
      long cycle = System.currentTimeMillis() - 60_000;
      assertTrue(store.writesFresh(), "a new store writes history with the plain insert");

      // new results only: written fresh, and the store stays fresh
      assertEquals(new BatchStore.Committed(3, 3), committed(store, PipelinedWriteIT.batch("a", cycle, false)));
      assertTrue(store.writesFresh(), "no duplicate, no switch");
      assertEquals(0, store.rewrites());

      // the same three again (a redelivery) with three new ones: the plain insert fails on the key, the batch is written again
      List<BatchStore.Part> mixed = new ArrayList<>(PipelinedWriteIT.batch("a", cycle, false));
      mixed.addAll(PipelinedWriteIT.batch("b", cycle, false));
      BatchStore.Committed again = committed(store, mixed);
      assertEquals(3, again.historyRows(), "only the new results go into history: " + again);
      assertFalse(store.writesFresh(), "after a duplicate the store keeps to the insert-or-ignore");
      assertEquals(1, store.rewrites(), "the batch was written twice");
      assertEquals(6, env.queryLong("SELECT count(*) FROM $S.device_status_history"));
      assertEquals(6, env.queryLong("SELECT count(*) FROM $S.device_status_current"));
      assertEquals(6, env.queryLong("SELECT sum(sample_count) FROM $S.device_status_rollup_1m"), "each result counted once in the rollups");

      // while guarded, a duplicate is skipped without a failed first try (the outcome is the same; the switch does not move)
      clock.advance(BatchStore.GUARDED_AFTER_DUPLICATE_MS - 1);
      assertEquals(0, committed(store, PipelinedWriteIT.batch("b", cycle, false)).historyRows());
      assertFalse(store.writesFresh());
      assertEquals(1, store.rewrites(), "while switched a duplicate is written once");

      // the window ends: fresh again, and new results are written as before
      clock.advance(1);
      assertTrue(store.writesFresh(), "fresh again " + BatchStore.GUARDED_AFTER_DUPLICATE_MS + " ms after the duplicate");
      assertEquals(new BatchStore.Committed(3, 3), committed(store, PipelinedWriteIT.batch("c", cycle, false)));
      assertEquals(9, env.queryLong("SELECT count(*) FROM $S.device_status_history"));
      assertEquals(9, env.queryLong("SELECT sum(sample_count) FROM $S.device_status_rollup_1m"));
    }
  }

  /**
   * A rollup row the planner takes for new (the device's newest result before the batch lies before the row's minute) goes in with a
   * plain insert; when it exists after all (written under the slot's earlier owner, here by hand), the insert fails on the rollup key,
   * the batch is written again with the upsert, and every result is counted once.
   */
  @Test
  void aRollupRowTakenForNewThatExistsMakesTheBatchWrittenAgainAndCountedOnce() throws Exception {
    try (TestEnv env = new TestEnv(1); AgedSchema db = AgedSchema.open(env)) {
      env.execute("UPDATE $S.slot_lease SET owner_worker_id = 'w', lease_epoch = 1, state = 'ACTIVE'");
      BatchStore store = new BatchStore(db.pool(), "w", new ManualClock(System.currentTimeMillis()), 0);
      long minute = (System.currentTimeMillis() - 600_000) / 60_000 * 60_000;
      Map<String, DerivedState> memory = new HashMap<>();

      // minute 0: the devices are new to the memory, so their rows go through the upsert; then minute 1 is new for both
      assertEquals(0, plannedNew(memory, minute + 1_000, 1), "devices the memory does not know: no row is taken for new");
      commit(store, memory, minute + 1_000, 1);
      assertEquals(2, plannedNew(memory, minute + 61_000, 2), "the next minute is new for both devices");
      assertEquals(new BatchStore.Committed(2, 2), commit(store, memory, minute + 61_000, 2));
      assertEquals(0, store.rewrites(), "rows taken for new were new: no second write");
      assertTrue(store.writesFresh());

      // minute 2: d-0's row is already there (a slot's earlier owner counted another result of it)
      env.execute("INSERT INTO $S.device_status_rollup_1m (minute_bucket, device_id, sample_count, down_count, state_changes, last_state,"
          + " last_cycle_id, last_seq, seen_cycle, seen_seq) VALUES (to_timestamp(" + (minute + 120_000) / 1000 + "), 'd-0', 1, 1, 0, 'DOWN', "
          + (minute + 120_500) + ", 99, ARRAY[" + (minute + 120_500) + "]::bigint[], ARRAY[99]::bigint[])");
      assertEquals(2, plannedNew(memory, minute + 121_000, 3));
      assertEquals(new BatchStore.Committed(2, 2), commit(store, memory, minute + 121_000, 3));
      assertEquals(1, store.rewrites(), "the batch was written again with the upsert");
      assertFalse(store.writesFresh(), "and the store keeps to the upsert for a while");
      String row = "FROM $S.device_status_rollup_1m WHERE minute_bucket = to_timestamp(" + (minute + 120_000) / 1000 + ") AND device_id = ";
      assertEquals(List.of(2L, 1L, 1L), List.of(env.queryLong("SELECT sample_count " + row + "'d-0'"), env.queryLong("SELECT down_count " + row + "'d-0'"),
          env.queryLong("SELECT state_changes " + row + "'d-0'")), "d-0's row counts its earlier result and the batch's (DOWN, then UP: one change)");
      assertEquals(List.of(1L, 0L, 0L), List.of(env.queryLong("SELECT sample_count " + row + "'d-1'"), env.queryLong("SELECT down_count " + row + "'d-1'"),
          env.queryLong("SELECT state_changes " + row + "'d-1'")), "d-1's row counts the batch's result alone");
      assertEquals(7, env.queryLong("SELECT sum(sample_count) FROM $S.device_status_rollup_1m"), "the six results once each, and the row's earlier one");
      assertEquals(6, env.queryLong("SELECT count(*) FROM $S.device_status_history"));
    }
  }

  /** How many of the results two devices report at {@code ms} the planner takes for the first of their minute. */
  private static long plannedNew(Map<String, DerivedState> memory, long ms, long seq) {
    return plan(memory, ms, seq).history().stream().filter(StatePlanner.HistoryRow::newMinute).count();
  }

  private static StatePlanner.Plan plan(Map<String, DerivedState> memory, long ms, long seq) {
    List<Envelope> es = new ArrayList<>();
    Map<String, DeviceDirectory.Info> infos = new HashMap<>();
    for (int i = 0; i < 2; i++) {
      String d = "d-" + i;
      es.add(new Envelope(Envelope.messageId("n", ms, d, seq), d, 0, 1, 1, 1, "n", ms, seq, Instant.ofEpochMilli(ms), Priority.NORMAL,
          new JsonObject().put("status", "UP")));
      infos.put(d, new DeviceDirectory.Info(2, PayloadProfiles.DEFAULT, false));
    }
    return StatePlanner.plan(es, memory, infos, AlertRules::forPriority);
  }

  /** Plans two devices' results at {@code ms}, commits them, and updates {@code memory} as the slot does after a commit. */
  private static BatchStore.Committed commit(BatchStore store, Map<String, DerivedState> memory, long ms, long seq) throws Exception {
    StatePlanner.Plan p = plan(memory, ms, seq);
    BatchStore.Committed c = committed(store, List.of(new BatchStore.Part(0, 1, p)));
    memory.putAll(p.next());
    return c;
  }

  private static BatchStore.Committed committed(BatchStore store, List<BatchStore.Part> parts) throws Exception {
    Map<Integer, BatchStore.Outcome> out = awaitResult(store.commit(parts));
    assertTrue(out.get(0) instanceof BatchStore.Committed, "committed: " + out);
    return (BatchStore.Committed) out.get(0);
  }
}
