package dev.inspection.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A worker's commit latency, each slot batch timed from when it was due (its wait for room in the commit queue included), read
 * two ways: exported as {@code worker_commit_latency} (percentiles over two minutes, and buckets), which the bench, the drills
 * and dashboards read; and as the p99 of the last {@code worker.commit.p99.window.ms}, which the worker reports in its
 * heartbeat for the fleet mode, the scale-out and the wave sizing.
 *
 * <p>Why two: until 2026-12-07 the heartbeat read the exported percentiles, which keep a slow batch for two minutes. After an
 * overload the fleet stayed in BACKPRESSURE_CRITICAL (critical devices alone inspected) for about a minute after the worker had
 * caught up (a capacity run, 17:10–17:11 UTC: committing the critical devices' 1,500 results a second as they came), because
 * the p99 still held the batches that had waited.
 */
public final class CommitLatency {
  /** At most this many batches in the heartbeat's window (a capacity run commits about 500 slot batches a second). */
  private static final int RECENT_MAX = 100_000;

  private final Latency exported;
  private final Object lock = new Object();
  private CommitWindow recent = new CommitWindow(30_000, Long.MAX_VALUE, RECENT_MAX);

  CommitLatency(MeterRegistry registry) {
    exported = new Latency(registry, "worker_commit_latency", "batch transaction time", Duration.ofMinutes(2), b -> b);
  }

  /** A batch committed at {@code atMs} (epoch ms), {@code nanos} after it was due. */
  void record(long nanos, long atMs) {
    exported.record(nanos, TimeUnit.NANOSECONDS);
    synchronized (lock) {
      recent.add(atMs, nanos / 1_000_000, true);
    }
  }

  /** The heartbeat's window, {@code worker.commit.p99.window.ms} (a worker sets it at start; 30 s until then). */
  public void windowMs(long ms) {
    synchronized (lock) {
      recent = new CommitWindow(ms, Long.MAX_VALUE, RECENT_MAX);
    }
  }

  /**
   * The heartbeat's figure: the p99 in ms of the batches committed in the window before {@code nowMs} (sorted at each call: a
   * heartbeat every few seconds); 0 when none committed in it, -1 before the first commit.
   */
  public long recentP99Ms(long nowMs) {
    synchronized (lock) {
      recent.trim(nowMs);
      if (recent.commits() > 0) return recent.p99Ms();
    }
    return exported.percentiles().count() == 0 ? -1 : 0;
  }

  /** The exported percentiles' p99 in ms (two minutes); -1 before the first commit. */
  public double p99Ms() {
    if (exported.percentiles().count() == 0) return -1;
    for (ValueAtPercentile v : exported.percentiles().takeSnapshot().percentileValues()) {
      if (v.percentile() == 0.99) return v.value(TimeUnit.MILLISECONDS);
    }
    return -1;
  }
}
