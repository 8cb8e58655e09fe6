package dev.inspection.probe;

/**
 * A token bucket over frames: {@code perSecond} tokens a second, holding at most one second's worth. A push takes
 * as many tokens as it carries frames, all or none. Times come from the caller (ms), so it is tested without a clock.
 * Not thread-safe: the HTTP server's context owns it.
 */
public final class IngestRate {
  private final double perMs;
  private final double capacity;
  private double tokens;
  private long lastMs;

  public IngestRate(int perSecond, long nowMs) {
    if (perSecond <= 0) throw new IllegalArgumentException("the rate must be positive, got " + perSecond);
    this.perMs = perSecond / 1000.0;
    this.capacity = perSecond;
    this.tokens = perSecond;
    this.lastMs = nowMs;
  }

  /** Takes {@code frames} tokens when the bucket holds them: true; else takes nothing: false. */
  public boolean tryTake(int frames, long nowMs) {
    refill(nowMs);
    if (frames > tokens) return false;
    tokens -= frames;
    return true;
  }

  /** Whole seconds until {@code frames} tokens are there (at least 1), for Retry-After; frames beyond a second's worth never fit. */
  public long retryAfterSeconds(int frames, long nowMs) {
    refill(nowMs);
    double missing = Math.min(frames, capacity) - tokens;
    return Math.max(1, (long) Math.ceil(missing / perMs / 1000.0));
  }

  private void refill(long nowMs) {
    if (nowMs > lastMs) {
      tokens = Math.min(capacity, tokens + (nowMs - lastMs) * perMs);
      lastMs = nowMs;
    }
  }
}
