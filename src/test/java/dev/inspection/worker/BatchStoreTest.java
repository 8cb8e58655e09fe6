package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BatchStoreTest {
  @Test
  void smallTransactionsWithoutAlertEventsRunOnGenericPlansTheRestPlanForTheirValues() {
    assertEquals(BatchStore.GENERIC_PLANS, BatchStore.planMode(1, false, 16));
    assertEquals(BatchStore.GENERIC_PLANS, BatchStore.planMode(16, false, 16), "the limit itself is small");
    assertEquals(BatchStore.CUSTOM_PLANS, BatchStore.planMode(17, false, 16));
    assertEquals(BatchStore.CUSTOM_PLANS, BatchStore.planMode(1, true, 16), "alert events: their partitions are pruned by the plan");
    assertEquals(BatchStore.CUSTOM_PLANS, BatchStore.planMode(1, false, 0), "0: always planned for the values");
  }

  @Test
  void theFirstSwitchToTheInsertOrIgnoreIsLoggedAtInfoTheNextOnesOncePerQuietPeriod() {
    long q = BatchStore.SWITCH_LOG_QUIET_MS;
    for (long now : new long[] {0, 1, System.currentTimeMillis(), Long.MAX_VALUE / 2}) {
      assertTrue(BatchStore.loud(now, BatchStore.NEVER_LOGGED), "the first switch at " + now);
      assertFalse(BatchStore.loud(now + q - 1, now), "within the quiet period after a line at " + now);
      assertTrue(BatchStore.loud(now + q, now), "a quiet period after a line at " + now);
    }
  }
}
