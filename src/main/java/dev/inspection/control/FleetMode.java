package dev.inspection.control;

import java.util.List;

/**
 * How hard the probes may push (seed 000 §7.2, scenario F; DESIGN D10). The scheduler leader decides the
 * fleet's mode from what it measures; a probe may raise its own effective mode from what it sees. Both
 * sides share this vocabulary. The order of the constants is their severity: a probe inspects by the
 * most severe of the fleet's mode and its own ({@link #max}).
 */
public enum FleetMode {
  /** Every device at its rate. */
  NORMAL,
  /** Normal devices (priority 2) at half rate, low ones (3) paused; critical ones (1) unchanged. */
  BACKPRESSURE_HIGH,
  /** Only critical devices (priority 1) are inspected. */
  BACKPRESSURE_CRITICAL;

  /**
   * The legal moves: up by any number of steps at once (overload does not wait), down one step at a time
   * (each step down waits its own dwell time, so recovery is gradual).
   */
  public static final TransitionTable<FleetMode> TRANSITIONS = TransitionTable.of("fleet mode", FleetMode.class, FleetMode::next);

  private static List<FleetMode> next(FleetMode m) {
    return switch (m) {
      case NORMAL -> List.of(BACKPRESSURE_HIGH, BACKPRESSURE_CRITICAL);
      case BACKPRESSURE_HIGH -> List.of(NORMAL, BACKPRESSURE_CRITICAL);
      case BACKPRESSURE_CRITICAL -> List.of(BACKPRESSURE_HIGH);
    };
  }

  /** 0, 1, 2: the value of the {@code *_mode_level} gauges. */
  public int level() {
    return ordinal();
  }

  public boolean above(FleetMode other) {
    return compareTo(other) > 0;
  }

  /** The more severe of the two. */
  public static FleetMode max(FleetMode a, FleetMode b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  /** The mode one step less severe (NORMAL stays NORMAL). */
  public FleetMode stepDown() {
    return this == NORMAL ? NORMAL : values()[ordinal() - 1];
  }

  /** The mode named {@code s}; unknown or null → {@code fallback} (a newer scheduler must not stop an older probe). */
  public static FleetMode parse(String s, FleetMode fallback) {
    if (s == null) return fallback;
    for (FleetMode m : values()) if (m.name().equalsIgnoreCase(s.trim())) return m;
    return fallback;
  }
}
