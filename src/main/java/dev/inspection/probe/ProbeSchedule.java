package dev.inspection.probe;

import dev.inspection.control.Pacing;
import dev.inspection.inventory.Device;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Random;

/**
 * When each device is due next. A device's first check falls at a random point of its first interval
 * (so 10,000 devices do not fire together), and every later one one interval on, shifted by up to
 * {@code jitterPct} percent. Pure: time comes in as an argument.
 */
public final class ProbeSchedule {
  /** {@code round}: how many times the device was due before this entry (issue 12's modes skip by it). */
  private record Entry(long dueAt, String deviceId, long generation, long round) {}

  /** Whether a due check runs (issue 12's backpressure modes); a skipped one is rescheduled like a run one. */
  public interface Gate {
    boolean inspect(Device d, long round);
  }

  private final PriorityQueue<Entry> queue = new PriorityQueue<>((a, b) -> Long.compare(a.dueAt, b.dueAt));
  private final Map<String, Device> devices = new HashMap<>();
  private final Map<String, Long> generation = new HashMap<>();
  private final int jitterPct;
  private final Random random;
  private double pace = 1.0;
  private Gate gate = (d, round) -> true;

  public ProbeSchedule(int jitterPct, Random random) {
    this.jitterPct = jitterPct;
    this.random = random;
  }

  /** Adds or replaces a device. A replaced device keeps no stale queue entry alive. */
  public void put(Device d, long nowMs) {
    Device old = devices.put(d.deviceId(), d);
    long gen = generation.merge(d.deviceId(), 1L, Long::sum);
    long first = old != null && old.intervalMs() == d.intervalMs() ? nowMs + jittered(d.intervalMs()) : nowMs + (long) (random.nextDouble() * d.intervalMs());
    queue.add(new Entry(first, d.deviceId(), gen, 0));
  }

  /**
   * Cold-start pacing (seed 000 §4.4 A): from the next check on, non-critical devices are inspected at
   * {@code factor} of their rate; critical ones keep theirs. 1.0 is full speed.
   */
  public void pace(double factor) {
    this.pace = factor;
  }

  public double pace() {
    return pace;
  }

  /** From the next due check on, only checks {@code g} lets through are returned. */
  public void gate(Gate g) {
    this.gate = g;
  }

  public void remove(String deviceId) {
    devices.remove(deviceId);
    generation.merge(deviceId, 1L, Long::sum);
  }

  public int size() {
    return devices.size();
  }

  public Device device(String id) {
    return devices.get(id);
  }

  public Iterable<Device> devices() {
    return devices.values();
  }

  /** Devices due at {@code nowMs} that the gate lets through (at most {@code max}), each due one rescheduled one interval on. */
  public List<Device> pollDue(long nowMs, int max) {
    List<Device> due = new ArrayList<>();
    while (due.size() < max && !queue.isEmpty() && queue.peek().dueAt <= nowMs) {
      Entry e = queue.poll();
      Device d = devices.get(e.deviceId);
      if (d == null || generation.get(e.deviceId) != e.generation) continue;
      if (gate.inspect(d, e.round)) due.add(d);
      long interval = Pacing.intervalMs(d.intervalMs(), d.priority(), pace);
      long next = e.dueAt + jittered(interval);
      if (next <= nowMs) next = nowMs + jittered(interval); // fell behind: do not fire a burst of catch-ups
      queue.add(new Entry(next, e.deviceId, e.generation, e.round + 1));
    }
    return due;
  }

  private long jittered(long interval) {
    if (jitterPct <= 0) return interval;
    long span = interval * jitterPct / 100;
    return interval - span + (long) (random.nextDouble() * 2 * span);
  }
}
