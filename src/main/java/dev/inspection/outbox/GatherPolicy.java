package dev.inspection.outbox;

/**
 * How long each slot and priority gathers its results before they go as one message (issue 11). Pure: the
 * publisher asks once a second with its running count of published rows and the time.
 * <ul>
 *   <li>the fleet is behind (the probe inspects in a backpressure mode): {@code behindMs}, results wait in the slot
 *       queues for seconds anyway;</li>
 *   <li>the probe is busy (it published at least {@code busyPerS} results/s since the last call, and once busy until the rate
 *       falls below {@link #LEAVE_BUSY} of it: a rate near the threshold turned gathering on and off every second, with a
 *       log line each time): {@code busyMs}, a
 *       short wait that turns a slot's 3–4 results per confirm round trip into a message several times larger
 *       (at a million devices every 60 s, RabbitMQ cost 58 µs per result with the small messages and the two
 *       cores were full);</li>
 *   <li>otherwise 0: a lone result goes as soon as its slot has nothing unconfirmed.</li>
 * </ul>
 */
final class GatherPolicy {
  /** A busy probe stays busy until its rate falls below this share of {@code busyPerS}. */
  static final double LEAVE_BUSY = 0.8;
  private final long behindMs;
  private final long busyMs;
  private final double busyPerS;
  private long lastRows = -1;
  private long lastAtMs;
  private boolean busy;

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
    busy = busyPerS > 0 && perS >= (busy ? busyPerS * LEAVE_BUSY : busyPerS);
    if (behind) return behindMs;
    return busy ? busyMs : 0;
  }
}
