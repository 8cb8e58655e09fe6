package dev.inspection.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class GatherPolicyTest {
  @Test
  void behindGathersLongestBusyShortAndOtherwiseNot() {
    GatherPolicy p = new GatherPolicy(500, 200, 5000);
    assertEquals(0, p.gatherMs(false, 0, 0), "first call: no rate yet");
    assertEquals(0, p.gatherMs(false, 4_999, 1000), "4,999 results/s: not busy");
    assertEquals(200, p.gatherMs(false, 4_999 + 5_000, 2000), "5,000 results/s: busy");
    assertEquals(500, p.gatherMs(true, 20_000, 3000), "behind wins over busy");
    assertEquals(500, p.gatherMs(true, 20_000, 4000), "behind, whatever the rate");
    assertEquals(0, p.gatherMs(false, 20_100, 5000), "no longer behind and 100/s: at once");
    assertEquals(200, p.gatherMs(false, 20_100 + 12_000, 7000), "the rate over the time since the last call: 6,000/s over 2 s");
  }

  @Test
  void aZeroRateOrTimeNeverGathersForBeingBusy() {
    GatherPolicy noRate = new GatherPolicy(500, 200, 0);
    noRate.gatherMs(false, 0, 0);
    assertEquals(0, noRate.gatherMs(false, 1_000_000, 1000));
    GatherPolicy noTime = new GatherPolicy(500, 0, 5000);
    noTime.gatherMs(false, 0, 0);
    assertEquals(0, noTime.gatherMs(false, 1_000_000, 1000));
    assertEquals(500, noTime.gatherMs(true, 1_000_000, 2000), "behind still gathers");
  }

  @Test
  void aClockThatDidNotMoveCountsNoRate() {
    GatherPolicy p = new GatherPolicy(500, 200, 5000);
    p.gatherMs(false, 0, 1000);
    assertEquals(0, p.gatherMs(false, 1_000_000, 1000));
  }

  @Test
  void aRateNearTheThresholdStaysBusyUntilItFallsWellBelowIt() {
    GatherPolicy p = new GatherPolicy(500, 200, 5000);
    long rows = 0;
    long t = 0;
    p.gatherMs(false, rows, t);
    int[] perSecond = {4_900, 5_100, 4_700, 5_050, 4_100, 4_950, 3_900, 4_500, 5_000};
    long[] expected = {0, 200, 200, 200, 200, 200, 0, 0, 200};
    for (int i = 0; i < perSecond.length; i++) {
      rows += perSecond[i];
      t += 1000;
      assertEquals(expected[i], p.gatherMs(false, rows, t), "second " + i + " at " + perSecond[i] + " results/s");
    }
  }
}
