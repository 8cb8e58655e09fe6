package dev.inspection.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.outbox.ShedPolicy.Backlog;
import dev.inspection.outbox.ShedPolicy.Limits;
import dev.inspection.outbox.ShedPolicy.Usage;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ShedPolicyTest {
  private static final Limits ROWS_1000 = new Limits(1000, 0, 0, 0.9);

  @Test
  void belowEveryWatermarkNothingIsShed() {
    assertTrue(ShedPolicy.plan(new Usage(1000, 1L << 30, 1L << 30), new Limits(1000, 2L << 30, 1 << 20, 0.9),
        Map.of(3, new Backlog(500, 500_000), 2, new Backlog(500, 500_000))).isEmpty());
  }

  @Test
  void overTheRowWatermarkLowGoesFirstDownToTheTarget() {
    // 1,100 rows against 1,000: down to 900 means 200 rows, all from the 300 low ones
    Map<Integer, Long> plan = ShedPolicy.plan(new Usage(1100, 0, Long.MAX_VALUE), ROWS_1000,
        Map.of(1, new Backlog(100, 100), 2, new Backlog(700, 700), 3, new Backlog(300, 300)));
    assertEquals(Map.of(3, 200L), plan);
  }

  @Test
  void normalIsShedOnlyOnceLowIsGoneAndCriticalNever() {
    Map<Integer, Long> plan = ShedPolicy.plan(new Usage(3000, 0, Long.MAX_VALUE), ROWS_1000,
        Map.of(1, new Backlog(2000, 2000), 2, new Backlog(900, 900), 3, new Backlog(100, 100)));
    assertEquals(List.of(3, 2), List.copyOf(plan.keySet()), "low before normal");
    assertEquals(100L, plan.get(3));
    assertEquals(900L, plan.get(2), "every normal row, and still no critical one although 2,000 remain over the limit");
    assertTrue(!plan.containsKey(1));
  }

  @Test
  void theByteWatermarkShedsByTheRowsAverageSize() {
    // 1.2 MB used against 1 MB: down to 0.9 MB frees 300,000 bytes = 300 low rows of 1,000 bytes
    Map<Integer, Long> plan = ShedPolicy.plan(new Usage(2000, 1_200_000, Long.MAX_VALUE), new Limits(0, 1_000_000, 0, 0.9),
        Map.of(3, new Backlog(1000, 1_000_000), 2, new Backlog(1000, 1_000_000)));
    assertEquals(Map.of(3, 300L), plan);
  }

  @Test
  void littleFreeDiskShedsUntilTheFreeSpaceIsAboveItsWatermarkAgain() {
    // 100 MB must stay free, 50 MB are: free up to 100/0.9 = 111.1 MB, i.e. 61.1 MB = 611,112 low+normal rows of 100 bytes
    Map<Integer, Long> plan = ShedPolicy.plan(new Usage(10, 0, 50_000_000), new Limits(0, 0, 100_000_000, 0.9),
        Map.of(3, new Backlog(100_000, 10_000_000), 2, new Backlog(1_000_000, 100_000_000)));
    assertEquals(100_000L, plan.get(3));
    assertEquals(511_112L, plan.get(2));
  }

  @Test
  void aPriorityWithNothingWaitingIsSkipped() {
    assertEquals(Map.of(2, 200L), ShedPolicy.plan(new Usage(1100, 0, Long.MAX_VALUE), ROWS_1000, Map.of(2, new Backlog(1100, 1100))));
  }

  @Test
  void theByteTargetHoldsUntilUsageIsBelowItsShareOfTheLimitOrFreeSpaceAboveItsWatermarkOverTheShare() {
    Limits bytes = new Limits(0, 1_000_000, 0, 0.9);
    assertTrue(ShedPolicy.overByteTarget(new Usage(0, 1_200_000, Long.MAX_VALUE), bytes), "over the limit");
    assertTrue(ShedPolicy.overByteTarget(new Usage(0, 950_000, Long.MAX_VALUE), bytes), "under the limit, still over 90 % of it: keep freeing");
    assertFalse(ShedPolicy.overByteTarget(new Usage(0, 900_000, Long.MAX_VALUE), bytes), "at the target");
    Limits free = new Limits(0, 0, 100_000_000, 0.9);
    assertTrue(ShedPolicy.overByteTarget(new Usage(0, 0, 100_000_000), free), "at the watermark, below 100/0.9 MB free");
    assertFalse(ShedPolicy.overByteTarget(new Usage(0, 0, 111_111_112), free));
    assertFalse(ShedPolicy.overByteTarget(new Usage(5_000, Long.MAX_VALUE, 0), ROWS_1000), "the row watermark never asks for bytes");
  }
}
