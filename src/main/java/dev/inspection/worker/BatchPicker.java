package dev.inspection.worker;

import dev.inspection.messaging.Priority;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A slot's mailbox and the rule that picks its next batch (seed 000 §7.4). Pure: deliveries of any type,
 * time from the clock.
 * <ul>
 *   <li>a batch holds at most {@code batchMax} deliveries;</li>
 *   <li>high-priority deliveries fill three quarters of it and normal ones the rest — unless the oldest
 *       normal one waited over {@link #STARVATION_MS}: then normal ones go first, so a flood of critical
 *       results cannot hold the others back for ever;</li>
 *   <li>a batch is due once the mailbox holds {@code batchMax}, once its oldest delivery waited
 *       {@code lingerMs} (a small batch waits a little to fill), or at once when flushing (a graceful close
 *       commits everything it holds).</li>
 * </ul>
 */
public final class BatchPicker<D> {
  static final long STARVATION_MS = 60_000;

  private record Waiting<D>(D delivery, long receivedAtMs) {}

  private final int batchMax;
  private final long lingerMs;
  private final Clock clock;
  private final ArrayDeque<Waiting<D>> high = new ArrayDeque<>();
  private final ArrayDeque<Waiting<D>> normal = new ArrayDeque<>();

  public BatchPicker(int batchMax, long lingerMs, Clock clock) {
    if (batchMax < 1) throw new IllegalArgumentException("batchMax must be >= 1, got " + batchMax);
    this.batchMax = batchMax;
    this.lingerMs = lingerMs;
    this.clock = clock;
  }

  /** A delivery arrived now on the queue of priority {@code p}. */
  public void add(Priority p, D delivery) {
    (p == Priority.HIGH ? high : normal).add(new Waiting<>(delivery, clock.millis()));
  }

  public int size() {
    return high.size() + normal.size();
  }

  public boolean isEmpty() {
    return high.isEmpty() && normal.isEmpty();
  }

  /** Forgets every delivery (their channel is gone or closing: the broker returns them to the queue). */
  public void clear() {
    high.clear();
    normal.clear();
  }

  /**
   * When the next batch is due: 0 now, n &gt; 0 in n ms (the oldest delivery is still lingering), -1 never
   * (the mailbox is empty). {@code flush}: due now whatever the mailbox holds.
   */
  public long dueInMs(boolean flush) {
    if (isEmpty()) return -1;
    if (flush || size() >= batchMax) return 0;
    long waited = clock.millis() - oldestReceivedAtMs();
    return Math.max(0, lingerMs - waited);
  }

  /** Takes the next batch by the priority rule: at most {@code batchMax}, empty when the mailbox is. */
  public List<D> take() {
    List<D> batch = new ArrayList<>(Math.min(batchMax, size()));
    Waiting<D> oldestNormal = normal.peek();
    if (oldestNormal != null && clock.millis() - oldestNormal.receivedAtMs() > STARVATION_MS) move(normal, batch, batchMax);
    move(high, batch, batchMax * 3 / 4);
    move(normal, batch, batchMax);
    move(high, batch, batchMax);
    return batch;
  }

  private static <D> void move(ArrayDeque<Waiting<D>> from, List<D> to, int upTo) {
    while (to.size() < upTo && !from.isEmpty()) to.add(from.poll().delivery());
  }

  private long oldestReceivedAtMs() {
    if (high.isEmpty()) return normal.peek().receivedAtMs();
    if (normal.isEmpty()) return high.peek().receivedAtMs();
    return Math.min(high.peek().receivedAtMs(), normal.peek().receivedAtMs());
  }
}
