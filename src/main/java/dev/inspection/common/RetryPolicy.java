package dev.inspection.common;

import dev.inspection.config.Config;
import dev.inspection.config.Keys;

/** How long to wait between attempts after a failure: capped exponential backoff with jitter ({@link Backoff}). */
public record RetryPolicy(long initialMs, long maxMs) {
  public RetryPolicy {
    if (initialMs < 1 || maxMs < initialMs) throw new IllegalArgumentException("retry delays must satisfy 1 <= initial <= max (got " + initialMs + ", " + maxMs + ")");
  }

  /** The policy of {@code backoff.initial.ms} and {@code backoff.max.ms}. */
  public static RetryPolicy from(Config c) {
    return new RetryPolicy(c.getLong(Keys.BACKOFF_INITIAL_MS), c.getLong(Keys.BACKOFF_MAX_MS));
  }

  /** A fresh backoff (each retried activity has its own: attempts are counted per activity). */
  public Backoff backoff() {
    return new Backoff(initialMs, maxMs);
  }
}
