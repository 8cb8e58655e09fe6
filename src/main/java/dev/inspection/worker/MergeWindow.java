package dev.inspection.worker;

import dev.inspection.messaging.Priority;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/**
 * Seed 004's merge window (issue 13): deliveries of a profile with a window are held back, unacked, until the
 * window closes, then go as one batch, so the frames a device pushed within the window fold into one current
 * write ({@link StatePlanner} folds a batch per device; history still keeps every frame). Pure: time from the clock.
 * <ul>
 *   <li>the window opens with the first delivery it holds and closes {@code windowMs} later (the shortest window
 *       of what it holds decides), or at once when it holds {@code max} deliveries (a batch is never larger);</li>
 *   <li>what it holds is in no batch yet, so nothing held is ever acked (ack after commit is untouched); a close
 *       flushes it, and a lost channel clears it (the broker returns it to the queue);</li>
 *   <li>deliveries without a window never wait for it: they stay in their lanes ({@link BatchPicker}).</li>
 * </ul>
 */
public final class MergeWindow<D> {
  /** A held delivery, its queue and when its (oldest) result was collected. */
  public record Held<D>(Priority priority, D delivery, long collectedAtMs) {}

  private final int max;
  private final Clock clock;
  private final List<Held<D>> held = new ArrayList<>();
  private long closesAtMs = Long.MAX_VALUE;

  public MergeWindow(int max, Clock clock) {
    if (max < 1) throw new IllegalArgumentException("a merge window holds at least 1 delivery, got " + max);
    this.max = max;
    this.clock = clock;
  }

  /** Holds a delivery that arrived now; {@code windowMs} &gt; 0 is the window of its profile. */
  public void hold(Priority p, D delivery, long collectedAtMs, long windowMs) {
    if (windowMs <= 0) throw new IllegalArgumentException("a held delivery needs a window > 0 ms, got " + windowMs);
    long now = clock.millis();
    held.add(new Held<>(p, delivery, Math.min(collectedAtMs, now)));
    closesAtMs = Math.min(closesAtMs, now + windowMs);
  }

  /** 0: the window is closed (or full, or {@code flush}); n &gt; 0: it closes in n ms; -1: it holds nothing. */
  public long dueInMs(boolean flush) {
    if (held.isEmpty()) return -1;
    if (flush || held.size() >= max) return 0;
    return Math.max(0, closesAtMs - clock.millis());
  }

  /** Everything held, in arrival order (at most {@code max}); the next delivery opens a new window. */
  public List<Held<D>> take() {
    int n = Math.min(max, held.size());
    List<Held<D>> out = new ArrayList<>(held.subList(0, n));
    held.subList(0, n).clear();
    if (held.isEmpty()) closesAtMs = Long.MAX_VALUE;
    return out;
  }

  /** The deliveries held, in arrival order. */
  public List<D> deliveries() {
    List<D> out = new ArrayList<>(held.size());
    for (Held<D> h : held) out.add(h.delivery());
    return out;
  }

  public int size() {
    return held.size();
  }

  /** Forgets everything held (its channel is gone or closing: the broker returns it to the queue). */
  public void clear() {
    held.clear();
    closesAtMs = Long.MAX_VALUE;
  }
}
