package dev.inspection.probe;

/**
 * What a simulated device ({@code check_type: "sim"}) answers on its n-th check, by {@code check_spec.pattern}:
 * {@code random} (the default: DOWN with the fail rate) or {@code flap}, which alternates UP and DOWN for
 * {@link #FLAP_CHECKS} checks and then stays UP for as many — with the default rules (above 30 % weighted state change
 * over 21 results) a {@code device.flapping} alert starts in the first half and resolves in the second, so the demo
 * shows both. Pure.
 */
public final class SimPattern {
  public static final String RANDOM = "random";
  public static final String FLAP = "flap";
  static final int FLAP_CHECKS = 40;

  private SimPattern() {}

  /** Whether check {@code n} (0, 1, 2, … per device) of a flapping device answers UP. */
  public static boolean flapUp(long n) {
    long inPeriod = Math.floorMod(n, 2L * FLAP_CHECKS);
    return inPeriod >= FLAP_CHECKS || inPeriod % 2 == 0;
  }

  /** Where a device starts in the period, so that a fleet's flapping devices do not all flap at once. */
  public static long offset(String deviceId) {
    return Math.floorMod(deviceId.hashCode(), 2L * FLAP_CHECKS);
  }
}
