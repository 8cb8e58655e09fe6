package dev.inspection.outbox;

/**
 * How long each slot and priority gathers its results before they go as one message (issue 11). Pure: the
 * publisher asks once a second with its running count of published rows and the time.
 * <ul>
 *   <li>the fleet is behind (the probe inspects in a backpressure mode): {@code behindMs}, results wait in the slot
 *       queues for seconds anyway;</li>
 *   <li>the probe is busy (it published at least {@code busyPerS} results/s since the last call): {@code busyMs}, a
 *       short wait that turns a slot's 3–4 results per confirm round trip into a message several times larger
 *       (at a million devices every 60 s, RabbitMQ cost 58 µs per result with the small messages and the two
 *       cores were full);</li>
 *   <li>otherwise 0: a lone result goes as soon as its slot has nothing unconfirmed.</li>
 * </ul>
 */
final class GatherPolicy {
  private final long behindMs;
  private final long busyMs;
  private final double busyPerS;
  private long lastRows = -1;
  private long lastAtMs;

  /** {@code busyPerS} 0 or {@code busyMs} 0: never gathers for being busy. */
  GatherPolicy(long behindMs, long busyMs, double busyPerS) {
    this.behindMs = Math.max(0, behindMs);
    this.busyMs = Math.max(0, busyMs);
    this.busyPerS = busyPerS;
  }

  /** The gather time now (0: publish at once); {@code publishedRows} only grows. */
  long gatherMs(boolean behind, long publishedRows, long nowMs) {
    double perS = lastRows < 0 || nowMs <= lastAtMs ? 0 : (publishedRows - lastRows) * 1000.0 / (nowMs - lastAtMs);
    lastRows = publishedRows;
    lastAtMs = nowMs;
    if (behind) return behindMs;
    return busyPerS > 0 && perS >= busyPerS ? busyMs : 0;
  }
}
