package dev.inspection.messaging;

/** The two queues of a slot. Devices of priority 1 (critical) go to {@code high}, the rest to {@code normal}. */
public enum Priority {
  HIGH("high"), NORMAL("normal");

  public final String wire;

  Priority(String wire) {
    this.wire = wire;
  }

  public static Priority ofDevicePriority(int devicePriority) {
    return devicePriority == 1 ? HIGH : NORMAL;
  }

  public static Priority parse(String s) {
    for (Priority p : values()) if (p.wire.equals(s)) return p;
    return null;
  }
}
