package dev.inspection.outbox;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The probe's per-device sequence numbers (INV-5: a device's seq only grows), handed out one append at a time:
 * {@link #begin}, {@link #next} for each result; if the append does not become durable, {@link #rollBack} gives
 * back every number it handed out (the next {@link #begin} keeps them otherwise). One map lookup per result: at 150,000 devices
 * the lookups of the earlier map of boxed numbers were about a tenth of the append's CPU (JFR, issue 11).
 * Not thread-safe: the outbox's thread owns it.
 */
final class DeviceSeqs {
  /** A device's last number, and the append that last numbered it. */
  private static final class Cell {
    long value;
    long append;
  }

  private final Map<String, Cell> cells = new HashMap<>();
  private long append;
  private final List<String> touchedIds = new ArrayList<>();
  private final List<Cell> touched = new ArrayList<>();
  private final List<Long> before = new ArrayList<>();

  /** A device's last number as read from the file: never lowers one already known. */
  void atLeast(String deviceId, long seq) {
    Cell c = cells.computeIfAbsent(deviceId, k -> new Cell());
    c.value = Math.max(c.value, seq);
  }

  /** Starts numbering a new append (whatever an earlier one left undecided counts as committed). */
  void begin() {
    append++;
    touchedIds.clear();
    touched.clear();
    before.clear();
  }

  /** The next number of this device (from 1). */
  long next(String deviceId) {
    Cell c = cells.get(deviceId);
    if (c == null) cells.put(deviceId, c = new Cell());
    if (c.append != append) {
      c.append = append;
      touchedIds.add(deviceId);
      touched.add(c);
      before.add(c.value);
    }
    return ++c.value;
  }

  /** How many devices the current append numbered; {@link #touchedDevice} and {@link #touchedLast} name each once. */
  int touched() {
    return touched.size();
  }

  String touchedDevice(int i) {
    return touchedIds.get(i);
  }

  /** The last number the current append gave the {@code i}-th device it numbered. */
  long touchedLast(int i) {
    return touched.get(i).value;
  }

  /** The append failed: every device is back at the number it had before it. */
  void rollBack() {
    for (int i = 0; i < touched.size(); i++) {
      long old = before.get(i);
      if (old == 0) cells.remove(touchedIds.get(i)); // numbers start at 1: 0 is a device this append saw first
      else touched.get(i).value = old;
    }
    begin();
  }

  /** The last number of a device; 0 if it has none. */
  long last(String deviceId) {
    Cell c = cells.get(deviceId);
    return c == null ? 0 : c.value;
  }
}
