package dev.inspection.state;

import java.util.List;

/**
 * Percent state change of a device over its last results, weighted the way Nagios and Icinga weigh it:
 * a window of W results holds W-1 transitions; transition k (k = 0 the oldest slot, W-2 the newest) weighs
 * {@code 0.8 + 0.4 * k / (W - 2)}, i.e. from 0.8 up to 1.2 in equal steps (mean 1.0), and
 * <pre>  percent = 100 * (sum of the weights of the transitions that changed state) / (W - 1)</pre>
 * so a device that changes on every result scores 100 and a recent change counts more than an old one.
 * With fewer than W results the transitions fill the newest slots and the missing older ones count as "no
 * change" (Nagios starts its history filled with the first state), so the score is already comparable
 * while the ring fills up.
 */
public final class Flapping {
  public static final double OLDEST_WEIGHT = 0.8;
  public static final double NEWEST_WEIGHT = 1.2;

  private Flapping() {}

  /** Weight of transition slot {@code k} (0 = oldest) in a window of {@code window} (at least 3) results. */
  public static double weight(int k, int window) {
    if (window < 3 || k < 0 || k > window - 2) throw new IllegalArgumentException("slot " + k + " outside a window of " + window);
    return OLDEST_WEIGHT + (NEWEST_WEIGHT - OLDEST_WEIGHT) * k / (window - 2);
  }

  /** Percent state change (0..100) of {@code ring} (oldest first), looking at its last {@code window} results. */
  public static double percentStateChange(List<CheckStatus> ring, int window) {
    if (window < 3) throw new IllegalArgumentException("flap window must be >= 3, got " + window);
    int from = Math.max(0, ring.size() - window);
    int transitions = ring.size() - from - 1;
    if (transitions <= 0) return 0.0;
    int firstSlot = (window - 1) - transitions;
    double changed = 0.0;
    for (int t = 0; t < transitions; t++) {
      if (ring.get(from + t) != ring.get(from + t + 1)) changed += weight(firstSlot + t, window);
    }
    return 100.0 * changed / (window - 1);
  }
}
