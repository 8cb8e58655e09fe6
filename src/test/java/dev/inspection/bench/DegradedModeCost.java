package dev.inspection.bench;

import dev.inspection.worker.DegradedMode;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * What the DB-degraded mode costs a worker's event loop per commit (issue 11): every finished commit is reported and the
 * mode evaluated, with the default 180 s window full of commits at {@code rate} a second. The baseline is what the mode
 * did before 2026-12-07, in the same run: keep the window's commits and sort their latencies for the p99 at every
 * evaluation. Simulated time (the clock is an argument), CPU time of this thread. Prints µs per commit for both.
 * Run: {@code java -cp "target/classes:target/test-classes:$(cat target/bench-classpath.txt)" dev.inspection.bench.DegradedModeCost 140}
 */
public final class DegradedModeCost {
  private static final long WINDOW_MS = 180_000;

  private DegradedModeCost() {}

  public static void main(String[] args) {
    int rate = args.length > 0 ? Integer.parseInt(args[0]) : 140;
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    DegradedMode.Settings s = new DegradedMode.Settings(true, WINDOW_MS, 10, 0.3, 5000, 0.05, 1000, 60_000);
    long step = Math.max(1, 1000 / rate);
    for (int round = 1; round <= 3; round++) {
      DegradedMode mode = new DegradedMode(s, 0);
      SortedWindow sorted = new SortedWindow();
      SplittableRandom r = new SplittableRandom(round);
      long modeCpu = 0;
      long sortedCpu = 0;
      long lastP99 = 0;
      int measured = 0;
      for (long t = 0; t < 2 * WINDOW_MS + 60_000; t += step) {
        long latency = 20 + r.nextInt(200);
        boolean full = t >= WINDOW_MS; // measured once the window holds 180 s of commits
        long c0 = mx.getCurrentThreadCpuTime();
        mode.commit(t, latency, true);
        if (mode.evaluate(t, 0).isPresent()) throw new IllegalStateException("healthy commits entered the degraded mode");
        long c1 = mx.getCurrentThreadCpuTime();
        lastP99 = sorted.commitAndP99(t, latency);
        long c2 = mx.getCurrentThreadCpuTime();
        if (full) {
          modeCpu += c1 - c0;
          sortedCpu += c2 - c1;
          measured++;
        }
      }
      System.out.printf("round %d: %d commits/s, %d in the window: the mode %.2f µs per commit, sorting the window (before) %.1f µs per commit"
          + " (%.1f ms of CPU a second against %.1f; the last p99 %d ms)%n", round, rate, sorted.size(), modeCpu / 1e3 / measured,
          sortedCpu / 1e3 / measured, modeCpu / 1e6 / measured * rate, sortedCpu / 1e6 / measured * rate, lastP99);
    }
  }

  /** The mode's figures before 2026-12-07: the window's latencies copied and sorted for the nearest-rank p99 each time. */
  private static final class SortedWindow {
    private final ArrayDeque<long[]> samples = new ArrayDeque<>();

    long commitAndP99(long at, long latency) {
      samples.addLast(new long[] {at, latency});
      while (samples.peekFirst()[0] < at - WINDOW_MS) samples.removeFirst();
      long[] l = new long[samples.size()];
      int n = 0;
      for (long[] x : samples) l[n++] = x[1];
      Arrays.sort(l);
      return l[Math.max(0, (int) Math.ceil(0.99 * n) - 1)];
    }

    int size() {
      return samples.size();
    }
  }
}
