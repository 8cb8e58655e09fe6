package dev.inspection.worker;

import static dev.inspection.it.TestEnv.awaitResult;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.ManualClock;
import dev.inspection.it.TestEnv;
import java.util.ArrayList;
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

  private static BatchStore.Committed committed(BatchStore store, List<BatchStore.Part> parts) throws Exception {
    Map<Integer, BatchStore.Outcome> out = awaitResult(store.commit(parts));
    assertTrue(out.get(0) instanceof BatchStore.Committed, "committed: " + out);
    return (BatchStore.Committed) out.get(0);
  }
}
