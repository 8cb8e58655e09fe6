package dev.inspection.worker;

import dev.inspection.messaging.Envelope;
import dev.inspection.metrics.Metrics;
import java.util.List;

/**
 * A slot's figures since this worker took it over: the terms of the slot weight its heartbeat reports
 * (seed 000 §4.3), the batch and lag metrics, and the time from taking the slot up to its first commit. Created when the
 * slot is taken up; updated on the worker's context after each commit.
 */
public final class SlotStats {
  private final Metrics metrics;
  private final long takenUpNanos = System.nanoTime();
  private long committedTotal;
  private volatile long lastLagMs;
  private long batchNanosTotal;
  private long batches;
  private boolean delivered;

  SlotStats(Metrics metrics) {
    this.metrics = metrics;
  }

  /** A message of {@code slot} arrived: counted, and the first one since the slot was taken up is timed. */
  void delivered(int slot) {
    metrics.consumed(slot, 1);
    if (delivered) return;
    delivered = true;
    metrics.moves().firstDelivery((System.nanoTime() - takenUpNanos) / 1_000_000);
  }

  /** A batch of these results committed in {@code nanos}; {@code nowMs} for their lag. */
  void committed(List<Envelope> results, long nanos, long nowMs) {
    if (results.isEmpty()) return;
    metrics.batch(results.size(), nanos, nowMs);
    if (batches == 0) metrics.moves().firstCommit((System.nanoTime() - takenUpNanos) / 1_000_000);
    committedTotal += results.size();
    batchNanosTotal += nanos;
    batches++;
    long maxLag = 0;
    for (Envelope e : results) {
      long lag = nowMs - e.collectedAt().toEpochMilli();
      metrics.lagMillis(e.priority().devicePriority, lag);
      maxLag = Math.max(maxLag, lag);
    }
    lastLagMs = maxLag;
  }

  /** Messages committed on this slot since it was taken over. */
  public long committedTotal() {
    return committedTotal;
  }

  /** Probe-to-commit lag of the newest batch's oldest result. */
  public long lastLagMs() {
    return lastLagMs;
  }

  /** Average batch transaction time in ms. */
  public double averageBatchMs() {
    return batches == 0 ? 0 : batchNanosTotal / 1e6 / batches;
  }
}
