package dev.inspection.scheduler;

import java.util.HashMap;
import java.util.Map;

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

  /**
   * Every slot's weight, {@code 0 .. slots-1}: devices and critical devices from the inventory, and with
   * {@code measured} the terms the owners report ({@code figures}: rate, backlog, batch time) — the rebalancer's
   * view. Without {@code measured} only what the slot is (its devices and critical devices) — the scale-out's view:
   * a slot's backlog (the owner's mailbox) and batch time are mostly the owner's state, and its rate moves with
   * every heartbeat; weighed by them, workers that had just joined passed slots among themselves round after round
   * (132 moves in the minute after a cold start of three in {@code ScaleOutSimulationTest}, about 200 of 256 slots in
   * the failover drill), and a worker restarted within the 5-minute slot cooldown then found nothing it could take.
   * With an inventory that has no devices every slot weighs {@link #MIN}: the scale-out evens out slot counts.
   */
  static Map<Integer, Double> perSlot(Coefficients c, int slots, Map<Integer, Long> devices, Map<Integer, Long> critical,
      Map<Integer, SlotFigures.Figures> figures, boolean measured) {
    Map<Integer, Double> out = new HashMap<>();
    for (int s = 0; s < slots; s++) {
      SlotFigures.Figures f = figures.getOrDefault(s, SlotFigures.Figures.NONE);
      out.put(s, measured ? weight(c, devices.getOrDefault(s, 0L), f.rateOrZero(), f.backlog(), f.msOrZero(), critical.getOrDefault(s, 0L))
          : weight(c, devices.getOrDefault(s, 0L), 0, 0, 0, critical.getOrDefault(s, 0L)));
    }
    return out;
  }

  private static double nonNegative(double v) {
    return v > 0 ? v : 0;
  }
}
