package dev.inspection.probe;

import dev.inspection.control.Pacing;
import dev.inspection.inventory.Device;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.random.RandomGenerator;

/**
 * When each device is due next. A device's first check falls at a random point of its first interval
 * (so 10,000 devices do not fire together), and every later one one interval on, shifted by up to
 * {@code jitterPct} percent. Pure: time comes in as an argument.
 *
 * <p>Due times sit in a timing wheel of {@link #TICK_MS} ticks ({@link #WHEEL} of them, about 131 s ahead);
 * a time further out waits in an overflow queue until the wheel reaches it. Adding and taking an entry is
 * constant work, where a priority queue of a million entries cost about 3 µs per due device (issue 11,
 * {@code bench.ScheduleBench}). Devices due within one tick come out in no particular order among themselves;
 * none comes out before its due time.
 */
public final class ProbeSchedule {
  static final long TICK_MS = 16;
  static final int WHEEL = 8192; // a power of two
  /** A device priority whose checks are not held back to be gathered with others ({@link #lookInMs(long, long, long, long, int)}). */
  static final int CRITICAL = 1;

  /**
   * A device and its generation: a put or remove makes every older entry of it stale. The gate's inputs, the device's
   * priority and {@link ProbeMode#phase}, are kept here at the put: reading them from the device and its id at every due
   * check was a cache miss per check (6.7 % of the node's samples at capacity under {@code ProbeMode.phase}, then 4.1 %
   * under {@code ProbeMode.inspect} reading the priority; issue 11), and a skipped check now touches neither.
   */
  private static final class Held {
    Device device;
    long generation;
    int priority;
    int phase;
  }

  /** {@code round}: how many times the device was due before this entry (issue 12's modes skip by it). */
  private record Entry(long dueAt, Held held, long generation, long round) {}

  /** Whether a due check runs (issue 12's backpressure modes); a skipped one is rescheduled like a run one. */
  public interface Gate {
    /** {@code priority}: the device's; {@code phase}: its {@link ProbeMode#phase}. */
    boolean inspect(int priority, long round, int phase);
  }

  @SuppressWarnings("unchecked")
  private final ArrayList<Entry>[] wheel = new ArrayList[WHEEL];
  private final PriorityQueue<Entry> overflow = new PriorityQueue<>((a, b) -> Long.compare(a.dueAt, b.dueAt));
  /** The first tick not yet taken out completely; every wheel entry is due at this tick or later. */
  private long cursor = Long.MIN_VALUE;
  private final Map<String, Held> devices = new HashMap<>();
  private final int jitterPct;
  private final RandomGenerator random;
  private double pace = 1.0;
  private Gate gate = (priority, round, phase) -> true;

  public ProbeSchedule(int jitterPct, RandomGenerator random) {
    this.jitterPct = jitterPct;
    this.random = random;
  }

  /** Adds or replaces a device. A replaced device keeps no stale queue entry alive. */
  public void put(Device d, long nowMs) {
    if (cursor == Long.MIN_VALUE) cursor = Math.floorDiv(nowMs, TICK_MS);
    Held h = devices.computeIfAbsent(d.deviceId(), k -> new Held());
    Device old = h.device;
    h.device = d;
    h.priority = d.priority();
    h.phase = ProbeMode.phase(d.deviceId());
    h.generation++;
    long first = old != null && old.intervalMs() == d.intervalMs() ? nowMs + jittered(d.intervalMs()) : nowMs + (long) (random.nextDouble() * d.intervalMs());
    add(new Entry(first, h, h.generation, 0));
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
    Held h = devices.remove(deviceId);
    if (h != null) {
      h.device = null;
      h.generation++;
    }
  }

  public int size() {
    return devices.size();
  }

  public Device device(String id) {
    Held h = devices.get(id);
    return h == null ? null : h.device;
  }

  public Iterable<Device> devices() {
    List<Device> all = new ArrayList<>(devices.size());
    for (Held h : devices.values()) all.add(h.device);
    return Collections.unmodifiableList(all);
  }

  /** Devices due at {@code nowMs} that the gate lets through (at most {@code max}), each due one rescheduled one interval on. */
  public List<Device> pollDue(long nowMs, int max) {
    List<Device> due = new ArrayList<>();
    long nowTick = Math.floorDiv(nowMs, TICK_MS);
    if (cursor == Long.MIN_VALUE) cursor = nowTick;
    if (nowTick - cursor >= WHEEL) skipAhead(nowTick);
    while (cursor <= nowTick && due.size() < max) {
      pullOverflow(cursor);
      ArrayList<Entry> bucket = wheel[(int) (cursor & (WHEEL - 1))];
      if (bucket != null) {
        for (int i = bucket.size() - 1; i >= 0 && due.size() < max; i--) {
          Entry e = bucket.get(i);
          if (e.dueAt > nowMs) continue; // later in the current tick
          bucket.set(i, bucket.get(bucket.size() - 1));
          bucket.remove(bucket.size() - 1);
          fire(e, nowMs, due);
        }
        if (due.size() >= max || cursor == nowTick) break; // the rest of this tick is for a later call
      }
      cursor++;
    }
    return due;
  }

  /**
   * When the next device is due, at the latest {@code nowMs + horizonMs} (nothing due before then): the due time of the
   * first entry in the wheel from now on. It may be an entry of a device removed or replaced since (an early look finds
   * nothing due), never later than a real one. {@code nowMs} or earlier when something is due already.
   */
  public long nextDueAtMs(long nowMs, long horizonMs) {
    long limit = nowMs + horizonMs;
    if (cursor == Long.MIN_VALUE) return limit;
    long lastTick = Math.floorDiv(limit, TICK_MS);
    for (long t = cursor; t <= lastTick && t - cursor < WHEEL; t++) {
      ArrayList<Entry> bucket = wheel[(int) (t & (WHEEL - 1))];
      if (bucket == null || bucket.isEmpty()) continue;
      long first = Long.MAX_VALUE;
      for (Entry e : bucket) first = Math.min(first, e.dueAt);
      return Math.min(first, limit);
    }
    return overflow.isEmpty() ? limit : Math.min(overflow.peek().dueAt, limit);
  }

  /** How long until the next look at the schedule: until {@link #nextDueAtMs}, at least {@code minMs}, at most {@code maxMs}. */
  public long lookInMs(long nowMs, long minMs, long maxMs) {
    return lookInMs(nowMs, minMs, maxMs, 0, 1);
  }

  /**
   * How long until the next look when a due device may wait up to {@code gatherMs} for others to be checked with it: until
   * {@code gatherCount} devices are due, or a due device has waited {@code gatherMs} or a tenth of its interval, or when a
   * critical device (priority 1) is due, whichever comes first; at least {@code minMs}, at most {@code maxMs}. Every device of a look then travels
   * together (one outbox commit, one publish per slot, one worker transaction), where a look per device paid each of them
   * per result. A busy schedule, with something due at every look, is not changed. {@code gatherMs} 0: {@link #nextDueAtMs}.
   */
  public long lookInMs(long nowMs, long minMs, long maxMs, long gatherMs, int gatherCount) {
    long first = nextDueAtMs(nowMs, maxMs);
    long at = first;
    if (gatherMs > 0 && first > nowMs && first < nowMs + maxMs) at = gatheredAtMs(first, first + gatherMs, gatherCount);
    return Math.max(minMs, Math.min(maxMs, at - nowMs));
  }

  /**
   * The due time of the {@code count}-th device from the cursor on (to the tick: that tick's latest), or the latest time a
   * device due meanwhile may wait to ({@link #mayWaitMs}), or {@code limitMs}, whichever is earliest; never before
   * {@code firstMs}.
   */
  private long gatheredAtMs(long firstMs, long limitMs, int count) {
    long gatherMs = limitMs - firstMs;
    long at = limitMs;
    int seen = 0;
    long lastTick = Math.floorDiv(limitMs, TICK_MS);
    // from the first due device's tick: nextDueAtMs found the ticks before it empty, no need to walk them again
    for (long t = Math.max(cursor, Math.floorDiv(firstMs, TICK_MS)); t <= lastTick && t - cursor < WHEEL; t++) {
      ArrayList<Entry> bucket = wheel[(int) (t & (WHEEL - 1))];
      if (bucket == null || bucket.isEmpty()) continue;
      long latest = Long.MIN_VALUE;
      for (Entry e : bucket) {
        if (e.dueAt > at) continue;
        at = Math.min(at, Math.max(firstMs, e.dueAt + mayWaitMs(e.held, gatherMs)));
        seen++;
        latest = Math.max(latest, e.dueAt);
      }
      if (seen >= count) return Math.max(firstMs, Math.min(at, latest));
      if ((t + 1) * TICK_MS > at) break;
    }
    return at;
  }

  /**
   * How long a due device may wait to be gathered: nothing when critical, else {@code gatherMs} but at most a tenth of its
   * interval, so a device inspected every 200 ms is not held to every 500 ms (a removed one's stale entry: {@code gatherMs}).
   */
  private static long mayWaitMs(Held h, long gatherMs) {
    if (h.priority == CRITICAL) return 0;
    return h.device == null ? gatherMs : Math.min(gatherMs, h.device.intervalMs() / 10);
  }

  private void fire(Entry e, long nowMs, List<Device> due) {
    Held h = e.held;
    if (h.device == null || h.generation != e.generation) return; // removed or replaced since
    Device d = h.device;
    if (gate.inspect(h.priority, e.round, h.phase)) due.add(d);
    long interval = Pacing.intervalMs(d.intervalMs(), h.priority, pace);
    long next = e.dueAt + jittered(interval);
    if (next <= nowMs) next = nowMs + jittered(interval); // fell behind: do not fire a burst of catch-ups
    add(new Entry(next, h, e.generation, e.round + 1));
  }

  /** Time jumped further than the wheel reaches (a paused process, a clock set forward): everything in it is due. */
  private void skipAhead(long nowTick) {
    for (int i = 0; i < WHEEL; i++) {
      if (wheel[i] == null) continue;
      overflow.addAll(wheel[i]);
      wheel[i].clear();
    }
    cursor = nowTick; // the overflow's due entries come back in at this tick
  }

  /** Into the wheel when within its reach from the cursor, else into the overflow queue. */
  private void add(Entry e) {
    long tick = Math.floorDiv(e.dueAt, TICK_MS);
    if (tick < cursor) tick = cursor; // due already: taken at the next poll
    if (tick - cursor >= WHEEL) {
      overflow.add(e);
      return;
    }
    int i = (int) (tick & (WHEEL - 1));
    ArrayList<Entry> bucket = wheel[i];
    if (bucket == null) wheel[i] = bucket = new ArrayList<>();
    bucket.add(e);
  }

  /** Moves overflow entries the wheel now reaches (from {@code fromTick}) into it. */
  private void pullOverflow(long fromTick) {
    while (!overflow.isEmpty() && Math.floorDiv(overflow.peek().dueAt, TICK_MS) - fromTick < WHEEL) add(overflow.poll());
  }

  private long jittered(long interval) {
    if (jitterPct <= 0) return interval;
    long span = interval * jitterPct / 100;
    return interval - span + (long) (random.nextDouble() * 2 * span);
  }
}
