package dev.inspection.scheduler;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** When the leader counts each slot's devices again ({@link ControlLoop#countDue}): a scan of device_status_current. */
class DeviceCountDueTest {
  private static final long TEN_MIN = 600_000;
  private static final long REBALANCE = 60_000;

  @Test
  void countedAtTheFirstRoundThenOncePerIntervalNotEveryRebalance() {
    assertTrue(ControlLoop.countDue(1_000, 0, false, TEN_MIN, REBALANCE), "never read since the election");
    assertFalse(ControlLoop.countDue(61_000, 1_000, false, TEN_MIN, REBALANCE), "a rebalance a minute later uses the last count");
    assertFalse(ControlLoop.countDue(600_999, 1_000, false, TEN_MIN, REBALANCE));
    assertTrue(ControlLoop.countDue(601_000, 1_000, false, TEN_MIN, REBALANCE), "the interval is up");
  }

  @Test
  void aChangedSlotMapIsCountedAgainButNoMoreOftenThanEveryRebalance() {
    assertTrue(ControlLoop.countDue(61_000, 1_000, true, TEN_MIN, REBALANCE), "a reshard added slots or moved the devices");
    assertFalse(ControlLoop.countDue(2_000, 1_000, true, TEN_MIN, REBALANCE),
        "a map that changes again a second after a read waits for the rebalance interval: the scan never runs more often than before");
    assertTrue(ControlLoop.countDue(601_000, 1_000, true, TEN_MIN, REBALANCE));
  }
}
