package dev.inspection.worker;

import dev.inspection.messaging.Priority;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * How many deliveries each lane gives to one batch (pure; {@link BatchPicker} applies it). In order:
 * <ol>
 *   <li>the lanes that hold something share {@code batchMax} by weight, rounded down, at least one place
 *       for a lane with a weight; never more than a lane holds. When the batch is too small for a place
 *       each, low gives way first, then normal;</li>
 *   <li>a lane left with no place whose head is older than the starvation bound takes its over-age
 *       deliveries anyway, at most {@link #starvationCap} of them: they push out high first, then normal.
 *       A lane with a place needs no such help: its head is taken in this batch already. So an overload
 *       whose backlog is old as a whole keeps the weighted shares;</li>
 *   <li>what is still free goes to high. Only a batch without high fills up with normal, then low. So a
 *       batch that carries critical results is no larger than their share plus the others' shares (seed 000
 *       §7.4: at most 150 + 50): while critical results trickle in beside a normal backlog, each of them
 *       waits for a short commit, not for a full batch of normal ones — normal rows are not refused, they
 *       go in the next batch, which follows at once. ({@code fillBesideHigh}: fill up anyway,
 *       normal first, for throughput.)</li>
 * </ol>
 */
final class LaneShares {
  private LaneShares() {}

  private static final List<Priority> TOP_DOWN = List.of(Priority.HIGH, Priority.NORMAL, Priority.LOW);
  private static final List<Priority> BOTTOM_UP = List.of(Priority.LOW, Priority.NORMAL, Priority.HIGH);

  /** Per lane: deliveries to take, and how many of them only because they starved. */
  record Shares(Map<Priority, Integer> take, Map<Priority, Integer> starved) {
    int total() {
      return take.values().stream().mapToInt(Integer::intValue).sum();
    }
  }

  /** The most a starving lane may take beyond the weights in one batch: a quarter of it (at least one). */
  static int starvationCap(int batchMax) {
    return Math.max(1, batchMax / 4);
  }

  /**
   * {@code waiting}: deliveries each lane holds; {@code overAge}: how many at the head of each lane are older
   * than the starvation bound (at most {@link #starvationCap}).
   */
  static Shares of(int batchMax, BatchPicker.Lanes weights, Map<Priority, Integer> waiting, Map<Priority, Integer> overAge) {
    Map<Priority, Integer> take = new EnumMap<>(Priority.class);
    Map<Priority, Integer> starved = new EnumMap<>(Priority.class);
    int totalWeight = 0;
    for (Priority p : TOP_DOWN) if (waiting.get(p) > 0) totalWeight += weights.weight(p);
    int sum = 0;
    for (Priority p : TOP_DOWN) {
      int w = weights.weight(p);
      int n = waiting.get(p) == 0 || w == 0 ? 0 : Math.min(waiting.get(p), Math.max(1, (int) ((long) batchMax * w / totalWeight)));
      take.put(p, n);
      starved.put(p, 0);
      sum += n;
    }
    // 1. a batch too small for a place each: the lower lanes give way
    for (Priority p : BOTTOM_UP) {
      int cut = Math.min(sum - batchMax, take.get(p));
      if (cut > 0) {
        take.put(p, take.get(p) - cut);
        sum -= cut;
      }
    }
    // 2. a lane with no place whose head is over age takes it anyway, pushing high out first
    for (Priority p : TOP_DOWN) {
      if (take.get(p) > 0) continue;
      int extra = Math.min(overAge.get(p), starvationCap(batchMax));
      take.put(p, extra);
      starved.put(p, extra);
      sum += extra;
    }
    for (Priority p : TOP_DOWN) {
      int cut = Math.min(sum - batchMax, take.get(p) - starved.get(p));
      if (cut > 0) {
        take.put(p, take.get(p) - cut);
        sum -= cut;
      }
    }
    for (Priority p : BOTTOM_UP) {
      int cut = Math.min(sum - batchMax, starved.get(p));
      if (cut > 0) {
        take.put(p, take.get(p) - cut);
        starved.put(p, starved.get(p) - cut);
        sum -= cut;
      }
    }
    // 3. what is still free goes to high while it holds more; only a batch without high fills up with the others
    for (Priority p : waiting.get(Priority.HIGH) > 0 && !weights.fillBesideHigh() ? List.of(Priority.HIGH) : TOP_DOWN) {
      int more = Math.min(batchMax - sum, waiting.get(p) - take.get(p));
      if (more > 0) {
        take.put(p, take.get(p) + more);
        sum += more;
      }
    }
    return new Shares(take, starved);
  }
}
