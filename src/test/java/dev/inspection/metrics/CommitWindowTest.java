package dev.inspection.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The degraded mode's counted commit window against sorting every commit of the window, as the mode did before. */
class CommitWindowTest {
  private record Commit(long at, long latencyMs, boolean ok) {}

  /** The reference: the commits at or after {@code from}, sorted, nearest-rank p99 (the mode's figures before 2026-12-07). */
  private static long[] reference(List<Commit> all, long from) {
    long[] l = all.stream().filter(c -> c.at() >= from).mapToLong(Commit::latencyMs).toArray();
    Arrays.sort(l);
    return l;
  }

  @Test
  void countsAndTheP99DecisionMatchSortingTheWindowOverRandomCommits() {
    SplittableRandom r = new SplittableRandom(7);
    for (int round = 0; round < 200; round++) {
      long horizon = 1 + r.nextInt(5_000);
      long limit = r.nextInt(2_000);
      CommitWindow w = new CommitWindow(horizon, limit, 1_000_000);
      List<Commit> all = new ArrayList<>();
      long now = 0;
      for (int i = 0; i < 400; i++) {
        now += r.nextInt(r.nextBoolean() ? 3 : 200); // bursts of commits in one millisecond, then gaps
        Commit c = new Commit(now, r.nextInt(10) == 0 ? r.nextLong(4_000) : r.nextLong(limit + 2), r.nextInt(8) != 0);
        all.add(c);
        w.add(c.at(), c.latencyMs(), c.ok());
        w.trim(now);
        long from = now - horizon;
        long[] l = reference(all, from);
        int failed = (int) all.stream().filter(x -> x.at() >= from && !x.ok()).count();
        String at = "round " + round + ", commit " + i;
        assertEquals(l.length, w.commits(), at);
        assertEquals(failed, w.failed(), at);
        long p99 = l.length == 0 ? 0 : l[Math.max(1, (int) Math.ceil(0.99 * l.length)) - 1];
        assertEquals(p99, w.p99Ms(), at);
        assertEquals(p99 > limit, w.p99AboveLimit(), at + ": p99 " + p99 + " against the limit " + limit);
      }
    }
  }

  @Test
  void theP99IsTheNearestRankOneSlowCommitInAHundredIsNotAboveTheLimit() {
    CommitWindow w = new CommitWindow(60_000, 1000, 1000);
    for (int i = 0; i < 99; i++) w.add(0, 10, true);
    w.add(0, 5000, true);
    assertFalse(w.p99AboveLimit(), "the 99th of 100 is 10 ms");
    assertEquals(10, w.p99Ms());
    w.add(0, 5000, true);
    assertTrue(w.p99AboveLimit(), "the 100th of 101 is 5000 ms");
    assertEquals(5000, w.p99Ms());
  }

  @Test
  void commitsLeaveTheWindowAndTheCapWithTheirCounts() {
    CommitWindow w = new CommitWindow(1000, 100, 3);
    w.add(0, 500, false);
    w.add(10, 500, false);
    w.add(20, 5, true);
    w.add(30, 5, true); // the cap of 3 drops the first
    assertEquals(3, w.commits());
    assertEquals(1, w.failed());
    w.trim(1015); // the commit at 10 is older than 1000 ms
    assertEquals(2, w.commits());
    assertEquals(0, w.failed());
    assertFalse(w.p99AboveLimit());
    w.trim(10_000); // every commit has left the window
    assertEquals(0, w.commits());
    assertEquals(0, w.p99Ms());
    assertFalse(w.p99AboveLimit(), "no commit: no p99 above anything");
  }

  @Test
  void aClockSteppedBackKeepsTheWindowInOrder() {
    CommitWindow w = new CommitWindow(1000, 100, 100);
    w.add(5000, 500, false);
    w.add(3000, 500, false); // the wall clock went back 2 s: counts as of 5000
    w.trim(5999);
    assertEquals(2, w.commits(), "both are within 1000 ms of 5000");
    w.trim(6001);
    assertEquals(0, w.commits());
    assertEquals(0, w.failed());
  }
}
