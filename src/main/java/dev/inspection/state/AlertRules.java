package dev.inspection.state;

import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import java.util.Objects;
import java.util.function.Function;

/**
 * The thresholds of the device rules for one priority.
 *
 * @param offlineAfterFailures consecutive failures that confirm an outage (Nagios' max_check_attempts): the
 *     state becomes HARD and "device.offline" fires on exactly this failure
 * @param offlineSeverity severity of "device.offline" (0..4 = INFO, WARN, MINOR, MAJOR, CRITICAL)
 * @param flapLowPct flapping stops when the percent state change drops below this
 * @param flapHighPct flapping starts when the percent state change exceeds this
 * @param flapWindow how many of the last results the percent state change looks at (21, as Nagios and Icinga)
 */
public record AlertRules(int offlineAfterFailures, int offlineSeverity, double flapLowPct, double flapHighPct, int flapWindow) {
  /** Icinga's defaults: flapping starts above 30 %, stops below 25 %, over the last 21 results. */
  public static final double DEFAULT_FLAP_LOW_PCT = 25.0;
  public static final double DEFAULT_FLAP_HIGH_PCT = 30.0;
  public static final int DEFAULT_FLAP_WINDOW = 21;

  public AlertRules {
    if (offlineAfterFailures < 1) {
      throw new IllegalArgumentException("offline after failures must be >= 1, got " + offlineAfterFailures);
    }
    if (offlineSeverity < 0 || offlineSeverity > 4) {
      throw new IllegalArgumentException("offline severity must be 0..4 (INFO..CRITICAL), got " + offlineSeverity);
    }
    if (!(flapLowPct >= 0 && flapLowPct <= flapHighPct && flapHighPct <= 100)) {
      throw new IllegalArgumentException("flapping thresholds need 0 <= low <= high <= 100, got low " + flapLowPct
          + ", high " + flapHighPct + " (high 100 turns flap detection off)");
    }
    if (flapWindow < 3 || flapWindow > DerivedState.MAX_RING) {
      throw new IllegalArgumentException("flap window must be 3.." + DerivedState.MAX_RING + " results, got " + flapWindow);
    }
  }

  /**
   * Defaults per device priority: critical (1) goes offline after 3 failures at CRITICAL, normal (2) after
   * 5 at MAJOR, low (3) after 10 at MINOR; flapping uses Icinga's defaults for all.
   */
  public static AlertRules forPriority(int priority) {
    return switch (priority) {
      case 1 -> new AlertRules(3, 4, DEFAULT_FLAP_LOW_PCT, DEFAULT_FLAP_HIGH_PCT, DEFAULT_FLAP_WINDOW);
      case 2 -> new AlertRules(5, 3, DEFAULT_FLAP_LOW_PCT, DEFAULT_FLAP_HIGH_PCT, DEFAULT_FLAP_WINDOW);
      case 3 -> new AlertRules(10, 2, DEFAULT_FLAP_LOW_PCT, DEFAULT_FLAP_HIGH_PCT, DEFAULT_FLAP_WINDOW);
      default -> throw new IllegalArgumentException("device priority must be 1 (critical), 2 (normal) or 3 (low), got " + priority);
    };
  }

  /** Config key of the failures threshold for a priority, e.g. {@code alert.offline.failures.p1}. */
  public static String offlineFailuresKey(int priority) {
    return "alert.offline.failures.p" + priority;
  }

  /** Config key of the offline severity for a priority, e.g. {@code alert.offline.severity.p1}. */
  public static String offlineSeverityKey(int priority) {
    return "alert.offline.severity.p" + priority;
  }

  public static final String FLAP_LOW_KEY = "alert.flap.low.pct";
  public static final String FLAP_HIGH_KEY = "alert.flap.high.pct";
  public static final String FLAP_WINDOW_KEY = "alert.flap.window";

  /**
   * The rules of a priority from configuration values: {@code lookup} returns the value of a key or null
   * when it is not set, and every unset key keeps {@link #forPriority}'s default. Keys:
   * {@code alert.offline.failures.p<n>}, {@code alert.offline.severity.p<n>}, {@code alert.flap.low.pct},
   * {@code alert.flap.high.pct}, {@code alert.flap.window}. A value that is not a number, or rules that
   * break the bounds above, are refused naming the key.
   */
  public static AlertRules fromConfig(int priority, Function<String, String> lookup) {
    Objects.requireNonNull(lookup, "lookup");
    AlertRules d = forPriority(priority);
    return new AlertRules(
        intValue(lookup, offlineFailuresKey(priority), d.offlineAfterFailures),
        intValue(lookup, offlineSeverityKey(priority), d.offlineSeverity),
        doubleValue(lookup, FLAP_LOW_KEY, d.flapLowPct),
        doubleValue(lookup, FLAP_HIGH_KEY, d.flapHighPct),
        intValue(lookup, FLAP_WINDOW_KEY, d.flapWindow));
  }

  private static int intValue(Function<String, String> lookup, String key, int dflt) {
    String v = lookup.apply(key);
    if (v == null || v.isBlank()) return dflt;
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + " must be a whole number, got '" + v + "'");
    }
  }

  private static double doubleValue(Function<String, String> lookup, String key, double dflt) {
    String v = lookup.apply(key);
    if (v == null || v.isBlank()) return dflt;
    try {
      return Double.parseDouble(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + " must be a number, got '" + v + "'");
    }
  }
}
