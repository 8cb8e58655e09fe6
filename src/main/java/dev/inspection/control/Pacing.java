package dev.inspection.control;

import dev.inspection.inventory.Device;

/**
 * Opens the probe tap gradually during a cold start. When only a few of the expected workers are up,
 * probing at full rate would pile a backlog on them (and on the broker) that the rest of the fleet then
 * inherits; so until {@code minWorkers} are active, non-critical devices are probed less often. Critical
 * devices (priority 1) are never slowed down: missing one of those costs more than a backlog does.
 */
public final class Pacing {
  /** Device priority that is never paced. */
  public static final int CRITICAL = 1;

  private Pacing() {}

  /**
   * The share of the normal rate to probe at: 1.0 once {@code activeWorkers >= minWorkers} (or when no
   * minimum is configured), otherwise a quarter more per active worker starting at a quarter with none:
   * {@code min(1.0, 0.25 * (1 + active))}.
   */
  public static double factor(int activeWorkers, int minWorkers) {
    if (minWorkers <= 0 || activeWorkers >= minWorkers) return 1.0;
    int active = Math.max(0, activeWorkers);
    return Math.min(1.0, 0.25 * (1 + active));
  }

  /**
   * The probe interval for a device of {@code priority}: critical devices keep {@code baseMs}, the others
   * get {@code baseMs / factor}, rounded to the nearest millisecond. A factor of 0 or below (or NaN) is a
   * caller bug and is refused rather than turned into an endless interval.
   */
  public static long intervalMs(long baseMs, int priority, double factor) {
    if (!(factor > 0)) throw new IllegalArgumentException("pacing factor must be > 0, was " + factor);
    if (priority == CRITICAL) return baseMs;
    return Math.round(baseMs / factor);
  }
}
