package dev.inspection.metrics;

import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * The commits of the last {@code horizonMs}, counted as they come and go: how many, how many failed, and how many took
 * longer than {@code limitMs}, so that "is the nearest-rank p99 above the limit" is answered without sorting. Pure: time
 * comes in as an argument. Two users: the worker's DB-degraded mode ({@code worker.DegradedMode}), and the commit p99 a
 * worker reports in its heartbeat ({@link CommitLatency#recentP99Ms}), which asks for the p99 itself.
 *
 * <p>Until 2026-12-07 the mode sorted every commit of its 180 s window after every commit to read the p99: at a million
 * devices (about 140 commits a second, 25,000 in the window) that sort was 3.3 % of the event loops' samples, and it grows
 * with the square of the commit rate. Now a commit costs a constant amount of work, and the exact p99 is sorted only for
 * the message of a change ({@link #p99Ms()}).
 *
 * <p>A commit's time is taken as at least the one before it: a wall clock stepped back leaves the window in time order,
 * and such a commit counts for as long as the one before it.
 */
public final class CommitWindow {
  private record Sample(long at, long latencyMs, boolean ok) {}

  private final long horizonMs;
  private final long limitMs;
  private final int maxSamples;
  private final ArrayDeque<Sample> samples = new ArrayDeque<>();
  private int failed;
  private int slow;
  private long lastAt = Long.MIN_VALUE;

  /** {@code maxSamples}: at most this many newest commits are kept (a bound on memory, far above a real window's count). */
  public CommitWindow(long horizonMs, long limitMs, int maxSamples) {
    this.horizonMs = horizonMs;
    this.limitMs = limitMs;
    this.maxSamples = maxSamples;
  }

  /** One finished commit at {@code at} (epoch ms) that took {@code latencyMs}. */
  public void add(long at, long latencyMs, boolean ok) {
    lastAt = Math.max(lastAt, at);
    Sample s = new Sample(lastAt, latencyMs, ok);
    samples.addLast(s);
    if (!ok) failed++;
    if (latencyMs > limitMs) slow++;
    if (samples.size() > maxSamples) drop();
  }

  /** Forgets the commits older than {@code horizonMs} before {@code now}. */
  public void trim(long now) {
    while (!samples.isEmpty() && samples.peekFirst().at() < now - horizonMs) drop();
  }

  public int commits() {
    return samples.size();
  }

  public int failed() {
    return failed;
  }

  public double failureRatio() {
    return samples.isEmpty() ? 0 : (double) failed / samples.size();
  }

  /**
   * Whether the nearest-rank p99 (the {@code ceil(0.99 n)}-th smallest latency) is above the limit: it is when fewer than
   * {@code ceil(0.99 n)} commits took at most the limit. False with no commit.
   */
  public boolean p99AboveLimit() {
    int n = samples.size();
    return n > 0 && n - slow < rank(n);
  }

  /** The nearest-rank p99 of the commits in the window, 0 with none: sorts them, so only for a message. */
  public long p99Ms() {
    int n = samples.size();
    if (n == 0) return 0;
    long[] l = new long[n];
    int i = 0;
    for (Sample s : samples) l[i++] = s.latencyMs();
    Arrays.sort(l);
    return l[rank(n) - 1];
  }

  private static int rank(int n) {
    return Math.max(1, (int) Math.ceil(0.99 * n));
  }

  private void drop() {
    Sample s = samples.removeFirst();
    if (!s.ok()) failed--;
    if (s.latencyMs() > limitMs) slow--;
  }
}
