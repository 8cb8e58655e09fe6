package dev.inspection.scheduler;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** When the leader counts each slot's devices again ({@link ControlLoop#countDue}): a scan of device_status_current. */
class DeviceCountDueTest {
  private static final long TEN_MIN = 600_000;

  @Test
  void countedAtTheFirstRoundThenOncePerIntervalNotEveryRebalance() {
    assertTrue(ControlLoop.countDue(1_000, 0, 0, 256, TEN_MIN), "never read since the election");
    assertFalse(ControlLoop.countDue(61_000, 1_000, 256, 256, TEN_MIN), "a rebalance a minute later uses the last count");
    assertFalse(ControlLoop.countDue(600_999, 1_000, 256, 256, TEN_MIN));
    assertTrue(ControlLoop.countDue(601_000, 1_000, 256, 256, TEN_MIN), "the interval is up");
  }

  @Test
  void aChangedSlotCountIsCountedAtOnce() {
    assertTrue(ControlLoop.countDue(2_000, 1_000, 256, 512, TEN_MIN), "a reshard moved every slot's devices");
    assertTrue(ControlLoop.countDue(2_000, 1_000, 512, 256, TEN_MIN), "and so does a shrink");
  }
}
