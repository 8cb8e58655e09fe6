package dev.inspection.messaging;

/**
 * The lanes of a slot, one queue each. Devices of priority 1 (critical) go to {@code high}, 2 to
 * {@code normal}, 3 to {@code low} (issue 12: low is a lane of its own, with the smallest share at the worker
 * and the shortest queue at the broker, so it is the first to be refused under overload).
 */
public enum Priority {
  HIGH("high", 1), NORMAL("normal", 2), LOW("low", 3);

  public final String wire;
  /** The device priority (seed 000 §7.1) this lane carries. */
  public final int devicePriority;

  Priority(String wire, int devicePriority) {
    this.wire = wire;
    this.devicePriority = devicePriority;
  }

  public static Priority ofDevicePriority(int devicePriority) {
    return switch (devicePriority) {
      case 1 -> HIGH;
      case 3 -> LOW;
      default -> NORMAL;
    };
  }

  public static Priority parse(String s) {
    for (Priority p : values()) if (p.wire.equals(s)) return p;
    return null;
  }
}
