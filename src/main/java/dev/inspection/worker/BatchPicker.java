package dev.inspection.worker;

import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import dev.inspection.messaging.Priority;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * A slot's mailbox, one lane per priority, and the rule that picks its next batch (seed 000 §7.4, issue 12).
 * Pure: deliveries of any type, time from the clock.
 * <ul>
 *   <li>a batch holds at most {@code batchMax} deliveries; with {@link #firstBatch} the first one after the mailbox
 *       starts (or is cleared) holds at most that many;</li>
 *   <li>the lanes that hold something share it by weight (default high:normal:low = 6:2:1, so high:normal is
 *       3:1); a lane with a weight gets at least one place; a share a lane cannot use goes to the others,
 *       high first ({@link LaneShares});</li>
 *   <li>anti-starvation by the result's age since {@code collected_at}, not by time in the mailbox: the
 *       deliveries at the head of a lane that are older than {@code starvationMs} are taken even when the
 *       weights leave that lane no place (weight 0, or a small batch), at most a quarter of the batch per
 *       lane, so a backlog that is old as a whole cannot push high out ({@link LaneShares});</li>
 *   <li>each lane in arrival order; a batch lists high, then normal, then low;</li>
 *   <li>a batch is due once the mailbox holds {@code batchMax}, once its oldest delivery waited
 *       {@code lingerMs} (a small batch waits a little to fill), or at once when flushing (a graceful close
 *       commits everything it holds);</li>
 *   <li>with {@link #holding}, a delivery whose profile has a merge window waits in the {@link MergeWindow} instead of
 *       a lane and goes in a batch of the window's own once it closes; the lanes' batches never wait for it.</li>
 * </ul>
 */
public final class BatchPicker<D> {
  /** Anti-starvation bound of the built-in defaults ({@code worker.lane.starvation.ms}). */
  public static final long STARVATION_MS = 60_000;

  /**
   * How the lanes share a batch: weights (0 = only what starves), the age bound since collected_at, and
   * whether a batch that carries critical results is still filled up with normal and low ones.
   */
  public record Lanes(int high, int normal, int low, long starvationMs, boolean fillBesideHigh) {
    public static final Lanes DEFAULT = new Lanes(6, 2, 1, STARVATION_MS, false);

    public static Lanes of(Config c) {
      return new Lanes(c.getInt(Keys.WORKER_LANE_WEIGHT_HIGH), c.getInt(Keys.WORKER_LANE_WEIGHT_NORMAL), c.getInt(Keys.WORKER_LANE_WEIGHT_LOW),
          c.getLong(Keys.WORKER_LANE_STARVATION_MS), c.getBool(Keys.WORKER_LANE_FILL_BESIDE_HIGH));
    }

    public Lanes {
      if (high < 1 || normal < 0 || low < 0) throw new IllegalArgumentException("lane weights: high >= 1, normal and low >= 0");
      if (starvationMs < 1) throw new IllegalArgumentException("starvationMs must be >= 1");
    }

    int weight(Priority p) {
      return switch (p) {
        case HIGH -> high;
        case NORMAL -> normal;
        case LOW -> low;
      };
    }
  }

  /** What one lane gave to a batch: how many, the age of the oldest (ms since collected_at), and how many only because they starved. */
  public record LaneTake(int taken, long oldestAgeMs, int starved) {}

  /** A batch and, per lane that gave to it, what it gave. */
  public record Take<D>(List<D> batch, Map<Priority, LaneTake> lanes) {}

  private record Waiting<D>(D delivery, long receivedAtMs, long collectedAtMs) {}

  private final int batchMax;
  /** The most the next batch holds: {@code firstMax} until the first batch after a start or clear, then {@code batchMax}. */
  private int limit;
  private int firstMax;
  private final long lingerMs;
  private final Lanes weights;
  private final Clock clock;
  private final Map<Priority, ArrayDeque<Waiting<D>>> lanes = new EnumMap<>(Priority.class);
  private int size;
  private MergeWindow<D> window;
  private ToLongFunction<D> windowOf = d -> 0;

  public BatchPicker(int batchMax, long lingerMs, Clock clock) {
    this(batchMax, lingerMs, Lanes.DEFAULT, clock);
  }

  public BatchPicker(int batchMax, long lingerMs, Lanes weights, Clock clock) {
    if (batchMax < 1) throw new IllegalArgumentException("batchMax must be >= 1, got " + batchMax);
    this.batchMax = batchMax;
    this.limit = batchMax;
    this.firstMax = batchMax;
    this.lingerMs = lingerMs;
    this.weights = weights;
    this.clock = clock;
    for (Priority p : Priority.values()) lanes.put(p, new ArrayDeque<>());
  }

  /**
   * The first batch after the mailbox starts or is cleared holds at most {@code max} (issue 14, takeover): a worker
   * taking over 146 slots with a backlog behind each used to hand in 146 full batches, 4 to a group commit, and
   * the last slot's first commit came 9.5 s after the first; small first batches all fit the first groups.
   */
  public BatchPicker<D> firstBatch(int max) {
    if (max < 1) throw new IllegalArgumentException("first batch must be >= 1, got " + max);
    firstMax = Math.min(max, batchMax);
    limit = size == 0 ? firstMax : limit;
    return this;
  }

  /** Deliveries for which {@code windowOf} gives a window &gt; 0 ms are held in a {@link MergeWindow} (issue 13). */
  public BatchPicker<D> holding(ToLongFunction<D> windowOf) {
    this.window = new MergeWindow<>(batchMax, clock);
    this.windowOf = windowOf;
    return this;
  }

  /** A delivery arrived now on the queue of priority {@code p}; its age counts from now. */
  public void add(Priority p, D delivery) {
    long now = clock.millis();
    add(p, delivery, now);
  }

  /** A delivery arrived now on the queue of priority {@code p}; its (oldest) result was collected at {@code collectedAtMs}. */
  public void add(Priority p, D delivery, long collectedAtMs) {
    long held = windowOf.applyAsLong(delivery);
    if (held > 0) {
      window.hold(p, delivery, collectedAtMs, held);
      return;
    }
    long now = clock.millis();
    lanes.get(p).add(new Waiting<>(delivery, now, Math.min(collectedAtMs, now)));
    size++;
  }

  /** Deliveries waiting, in the lanes and in the merge window. */
  /**
   * The deliveries the merge window holds (not in any batch yet, unacked): a batch's settlement passes them as left
   * outstanding, so its multiple ack never reaches over one of them (they may be older than the batch's deliveries on
   * the same channel: the window takes deliveries out of arrival order).
   */
  public List<D> held() {
    return window == null ? List.of() : window.deliveries();
  }

  public int size() {
    return size + (window == null ? 0 : window.size());
  }

  /** Deliveries waiting in the lanes (not in the merge window). */
  public int laneSize() {
    return size;
  }

  /** Deliveries waiting in one lane. */
  public int size(Priority p) {
    return lanes.get(p).size();
  }

  public boolean isEmpty() {
    return size() == 0;
  }

  /** Forgets every delivery (their channel is gone or closing: the broker returns them to the queue). */
  public void clear() {
    lanes.values().forEach(ArrayDeque::clear);
    size = 0;
    limit = firstMax;
    if (window != null) window.clear();
  }

  /**
   * When the next batch is due: 0 now, n &gt; 0 look again in n ms (the oldest delivery is still lingering), -1 never
   * (the mailbox is empty). {@code flush}: due now whatever the mailbox holds.
   */
  public long dueInMs(boolean flush) {
    long held = window == null ? -1 : window.dueInMs(flush);
    long lanes = lanesDueInMs(flush);
    // while the window is open the caller looks again at least every lingerMs, so a timer it set for the window
    // never holds back a lane's delivery that arrives meanwhile
    if (lanes < 0 && held > 0 && lingerMs > 0) return Math.min(held, lingerMs);
    return held < 0 ? lanes : lanes < 0 ? held : Math.min(held, lanes);
  }

  private long lanesDueInMs(boolean flush) {
    if (size == 0) return -1;
    if (flush || size >= limit) return 0;
    long oldest = Long.MAX_VALUE;
    for (ArrayDeque<Waiting<D>> lane : lanes.values()) if (!lane.isEmpty()) oldest = Math.min(oldest, lane.peek().receivedAtMs());
    return Math.max(0, lingerMs - (clock.millis() - oldest));
  }

  /** Takes the next batch by the lane rule: at most {@code batchMax} (or the first batch's limit), empty when the mailbox is. */
  public List<D> take() {
    return pick().batch();
  }

  /** Takes the next batch by the lane rule, with what each lane gave (for the lane metrics). */
  public Take<D> pick() {
    long now = clock.millis();
    if (window != null && window.size() > 0 && (size == 0 || window.dueInMs(false) == 0)) return closeWindow(now);
    Map<Priority, Integer> waiting = new EnumMap<>(Priority.class);
    Map<Priority, Integer> overAge = new EnumMap<>(Priority.class);
    for (Priority p : Priority.values()) {
      waiting.put(p, lanes.get(p).size());
      overAge.put(p, overAge(lanes.get(p), now, LaneShares.starvationCap(limit)));
    }
    LaneShares.Shares shares = LaneShares.of(limit, weights, waiting, overAge);
    if (shares.total() > 0) limit = batchMax;
    List<D> batch = new ArrayList<>(shares.total());
    Map<Priority, LaneTake> taken = new EnumMap<>(Priority.class);
    for (Priority p : Priority.values()) {
      int n = shares.take().get(p);
      if (n > 0) taken.put(p, takeFrom(p, n, now, shares.starved().get(p), batch));
    }
    return new Take<>(batch, taken);
  }

  /** The first {@code n} deliveries of lane {@code p} into {@code batch}, in arrival order: what the lane gave. */
  private LaneTake takeFrom(Priority p, int n, long now, int starved, List<D> batch) {
    ArrayDeque<Waiting<D>> lane = lanes.get(p);
    long oldest = Long.MAX_VALUE;
    for (int i = 0; i < n; i++) {
      Waiting<D> w = lane.poll();
      oldest = Math.min(oldest, w.collectedAtMs());
      batch.add(w.delivery());
    }
    size -= n;
    return new LaneTake(n, now - oldest, starved);
  }

  /** Whether the high lane holds a delivery ({@link #pickHigh}). */
  public boolean hasHigh() {
    return !lanes.get(Priority.HIGH).isEmpty();
  }

  /**
   * The high lane alone, in arrival order (at most {@code batchMax}, or the first batch's limit): critical results that go
   * ahead while the worker's commit queue is full ({@link CommitRoom}); the other lanes and the merge window wait for the
   * slot's turn.
   */
  public Take<D> pickHigh() {
    int n = Math.min(lanes.get(Priority.HIGH).size(), limit);
    if (n == 0) return new Take<>(List.of(), Map.of());
    limit = batchMax;
    List<D> batch = new ArrayList<>(n);
    return new Take<>(batch, Map.of(Priority.HIGH, takeFrom(Priority.HIGH, n, clock.millis(), 0, batch)));
  }

  /** The merge window's deliveries as one batch, high, then normal, then low (each in arrival order). */
  private Take<D> closeWindow(long now) {
    List<MergeWindow.Held<D>> held = window.take();
    List<D> batch = new ArrayList<>(held.size());
    Map<Priority, LaneTake> taken = new EnumMap<>(Priority.class);
    for (Priority p : Priority.values()) {
      List<MergeWindow.Held<D>> lane = held.stream().filter(h -> h.priority() == p).toList();
      if (lane.isEmpty()) continue;
      lane.forEach(h -> batch.add(h.delivery()));
      taken.put(p, new LaneTake(lane.size(), now - lane.stream().mapToLong(MergeWindow.Held::collectedAtMs).min().orElse(now), 0));
    }
    return new Take<>(batch, taken);
  }

  /** How many deliveries at the head of a lane are older than the starvation bound (counted up to {@code cap}). */
  private int overAge(ArrayDeque<Waiting<D>> lane, long now, int cap) {
    int n = 0;
    for (Waiting<D> w : lane) {
      if (n >= cap || now - w.collectedAtMs() <= weights.starvationMs()) break;
      n++;
    }
    return n;
  }
}
