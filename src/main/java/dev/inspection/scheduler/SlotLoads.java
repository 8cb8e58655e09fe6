package dev.inspection.scheduler;

import dev.inspection.control.SlotState;
import dev.inspection.scheduler.RebalancePlanner.SlotInfo;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The counted weight of each slot and who it counts for, within one planning call. Loads are summed
 * afresh from this table each time (in slot order) rather than adjusted by subtraction, so a long plan
 * does not drift and equal fleets give bit-equal loads.
 */
final class SlotLoads {
  private final Set<String> workers;
  private final Map<Integer, Double> weight = new TreeMap<>();
  private final Map<Integer, String> countsFor = new TreeMap<>();

  SlotLoads(Set<String> workers, List<SlotInfo> slots, Set<Integer> skip) {
    this.workers = workers;
    for (SlotInfo si : RebalancePlanner.distinct(slots)) {
      if (skip.contains(si.slot()) || !counts(si) || !workers.contains(si.owner())) continue;
      add(si.slot(), si.weight(), si.owner());
    }
  }

  static boolean counts(SlotInfo si) {
    return si.owner() != null && si.state().owned() && si.state() != SlotState.MOVING;
  }

  void add(int slot, double w, String owner) {
    weight.put(slot, w);
    countsFor.put(slot, owner);
  }

  void give(int slot, String owner) {
    countsFor.put(slot, owner);
  }

  /** Load per worker, every active worker present (0 when it holds nothing), in id order. */
  Map<String, Double> perWorker() {
    Map<String, Double> out = new LinkedHashMap<>();
    for (String w : workers) out.put(w, 0.0);
    for (Map.Entry<Integer, String> e : countsFor.entrySet()) {
      out.merge(e.getValue(), weight.get(e.getKey()), Double::sum);
    }
    return out;
  }

  String lightest() {
    return lightest(null);
  }

  /** The least-loaded worker other than {@code except}; null when there is none. */
  String lightest(String except) {
    String best = null;
    double bestLoad = 0;
    for (Map.Entry<String, Double> e : perWorker().entrySet()) {
      if (e.getKey().equals(except)) continue;
      if (best == null || e.getValue() < bestLoad) {
        best = e.getKey();
        bestLoad = e.getValue();
      }
    }
    return best;
  }

  /** {@code (max - min) / mean}; 0 when all loads are equal (including an empty fleet of slots). */
  double spread() {
    Map<String, Double> loads = perWorker();
    double max = Double.NEGATIVE_INFINITY;
    double min = Double.POSITIVE_INFINITY;
    double total = 0;
    for (double l : loads.values()) {
      max = Math.max(max, l);
      min = Math.min(min, l);
      total += l;
    }
    double target = total / loads.size();
    return max > min ? (max - min) / target : 0;
  }
}
