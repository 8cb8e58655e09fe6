package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
}
