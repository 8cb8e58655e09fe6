package dev.inspection.common;

import java.util.concurrent.ThreadLocalRandom;

/** Capped exponential backoff with full jitter; {@link #reset()} after a success. Not thread-safe. */
public final class Backoff {
  private final long initialMs;
  private final long maxMs;
  private int attempt;

  public Backoff(long initialMs, long maxMs) {
    this.initialMs = initialMs;
    this.maxMs = maxMs;
  }

  /** The next delay: uniform in [cap/2, cap] where cap = min(max, initial * 2^attempt), and never below 1 ms (a timer's minimum). */
  public long next() {
    long cap = Math.min(maxMs, initialMs << Math.min(attempt, 20));
    attempt++;
    return Math.max(1, cap / 2 + ThreadLocalRandom.current().nextLong(cap / 2 + 1));
  }

  public int attempts() {
    return attempt;
  }

  public void reset() {
    attempt = 0;
  }
}
