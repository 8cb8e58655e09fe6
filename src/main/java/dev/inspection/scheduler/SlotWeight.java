package dev.inspection.scheduler;

/**
 * How much work a slot is, as one number the rebalancer can add up. Slot counts alone balance badly once
 * devices are unevenly spread (one slot with a backlog or many critical devices is worth several quiet
 * ones), so the weight is a linear mix of what each slot costs. The floor of 1.0 keeps an empty slot worth
 * one unit: an idle fleet then balances by slot count instead of seeing every worker at zero.
 */
public final class SlotWeight {
  /** The floor: the weight of an empty, idle slot. */
  public static final double MIN = 1.0;

  private SlotWeight() {}

  /**
   * Coefficients of the mix, one per measured term: devices in the slot, messages per second (over the
   * last 5 minutes), backlog depth, average processing time in ms, critical (priority 1) devices.
   */
  public record Coefficients(double devices, double rate, double backlog, double processMs, double critical) {
    public Coefficients {
      check("devices", devices);
      check("rate", rate);
      check("backlog", backlog);
      check("processMs", processMs);
      check("critical", critical);
    }

    /** The seed values: 1 per device, 5 per msg/s, 10 per queued message, 2 per ms, 3 per critical device. */
    public static Coefficients defaults() {
      return new Coefficients(1, 5, 10, 2, 3);
    }

    private static void check(String name, double v) {
      if (!(v >= 0) || Double.isInfinite(v)) {
        throw new IllegalArgumentException("slot weight coefficient " + name + " must be finite and >= 0, was " + v);
      }
    }
  }

  /**
   * The linear sum of the terms, never below {@link #MIN}. A negative or NaN measurement (a gauge not yet
   * filled in) counts as 0, so one bad reading cannot make a slot look lighter than an empty one.
   */
  public static double weight(Coefficients c, long devices, double ratePerSec, long backlog, double avgProcessMs,
      long criticalDevices) {
    double sum = c.devices() * nonNegative(devices)
        + c.rate() * nonNegative(ratePerSec)
        + c.backlog() * nonNegative(backlog)
        + c.processMs() * nonNegative(avgProcessMs)
        + c.critical() * nonNegative(criticalDevices);
    return Math.max(MIN, sum);
  }

  private static double nonNegative(double v) {
    return v > 0 ? v : 0;
  }
}
