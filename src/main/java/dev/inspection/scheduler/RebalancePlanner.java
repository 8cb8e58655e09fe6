package dev.inspection.scheduler;

import dev.inspection.control.SlotState;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Decides which slots should change owner: spreading load after workers join ({@link #rebalance}), giving
 * out slots nobody holds ({@link #assign}) and emptying a worker that leaves ({@link #drain}). Pure and
 * deterministic (ties go to the smaller worker id, then the smaller slot id), so the leader can plan, log
 * and test a decision without any I/O, and a re-elected leader given the same view plans the same moves.
 *
 * <p>A worker's load is the sum of the weights of the slots it owns in an {@link SlotState#owned() owned}
 * state, except MOVING: a slot on its way out is counted for nobody, so it neither keeps its old owner
 * looking heavy nor is promised to a new one twice. Only workers passed in as active count; slots of any
 * other owner are left out of every total.
 */
public final class RebalancePlanner {
  private RebalancePlanner() {}

  /** What the planner needs to know about a slot. {@code owner} is null when nobody holds it. */
  public record SlotInfo(int slot, String owner, SlotState state, double weight) {
    public SlotInfo {
      Objects.requireNonNull(state, "state");
      if (!(weight >= 0) || Double.isInfinite(weight)) {
        throw new IllegalArgumentException("slot " + slot + " weight must be finite and >= 0, was " + weight);
      }
    }
  }

  /** One planned change of owner. {@code from} is null when the slot had no owner. */
  public record Move(int slot, String from, String to) {}

  /**
   * Tuning of {@link #rebalance}: the spread tolerated without moving anything, the most moves per plan,
   * how long a moved slot stays put, and how long a worker that gave a slot away is left alone as a source.
   */
  public record Settings(double threshold, int maxMoves, long slotCooldownMs, long sourceCooldownMs) {
    public Settings {
      if (!(threshold >= 0)) throw new IllegalArgumentException("threshold must be >= 0, was " + threshold);
      if (maxMoves < 0) throw new IllegalArgumentException("maxMoves must be >= 0, was " + maxMoves);
      if (slotCooldownMs < 0) throw new IllegalArgumentException("slotCooldownMs must be >= 0, was " + slotCooldownMs);
      if (sourceCooldownMs < 0) {
        throw new IllegalArgumentException("sourceCooldownMs must be >= 0, was " + sourceCooldownMs);
      }
    }

    /** 25 % spread, 5 moves, 5 minutes per slot, 1 minute per source. */
    public static Settings defaults() {
      return new Settings(0.25, 5, 300_000, 60_000);
    }
  }

  /** The moves to make and a one-line reason, meant for the log and the admin API. */
  public record Plan(List<Move> moves, String reason) {
    public Plan {
      moves = List.copyOf(moves);
      Objects.requireNonNull(reason, "reason");
    }
  }

  /**
   * Moves slots from heavy to light workers until the spread ({@code (max - min) / mean} of the loads) is
   * within {@code s.threshold()}, at most {@code s.maxMoves()} of them. Each step takes the lightest worker
   * and, trying sources from the heaviest down, moves the one ACTIVE slot whose weight is closest to half
   * the gap while staying strictly below the gap; so no step makes the pair further apart, and the spread
   * after a plan is never larger than before. Sources and slots in cooldown (judged against the given
   * history, not against moves of this same plan) are skipped.
   */
  public static Plan rebalance(List<String> activeWorkers, List<SlotInfo> slots, Map<Integer, Long> lastSlotMoveMs,
      Map<String, Long> lastSourceMoveMs, long nowMs, Settings s) {
    Set<String> workers = workerSet(activeWorkers, null);
    if (workers.isEmpty()) return new Plan(List.of(), "no active worker");
    SlotLoads loads = new SlotLoads(workers, slots, Set.of());
    double before = loads.spread();
    if (before <= s.threshold()) {
      return new Plan(List.of(), "balanced: spread " + pct(before) + " <= threshold " + pct(s.threshold()));
    }
    Candidates candidates = new Candidates(workers, slots, lastSlotMoveMs, lastSourceMoveMs, nowMs, s);
    List<Move> moves = new ArrayList<>();
    String stop;
    while (true) {
      if (loads.spread() <= s.threshold()) {
        stop = null;
        break;
      }
      if (moves.size() >= s.maxMoves()) {
        stop = "cap reached";
        break;
      }
      Move m = candidates.next(loads, true);
      if (m == null) {
        stop = candidates.next(loads, false) != null ? "blocked by cooldowns" : "nothing movable";
        break;
      }
      moves.add(m);
      candidates.taken(m.slot());
      loads.give(m.slot(), m.to());
    }
    return new Plan(moves, reason(moves.size(), before, loads.spread(), stop, s));
  }

  /**
   * Gives each slot of {@code unowned} to the currently least-loaded active worker, heaviest slot first
   * (equal weights keep the given order), counting every assignment before the next one. A slot missing
   * from {@code slots} weighs {@link SlotWeight#MIN}. Empty when there is no active worker.
   */
  public static List<Move> assign(List<String> activeWorkers, List<SlotInfo> slots, List<Integer> unowned) {
    Set<String> workers = workerSet(activeWorkers, null);
    if (workers.isEmpty() || unowned == null || unowned.isEmpty()) return List.of();
    Set<Integer> pending = new LinkedHashSet<>();
    for (Integer slot : unowned) if (slot != null) pending.add(slot);
    Map<Integer, Double> weights = new TreeMap<>();
    for (SlotInfo si : distinct(slots)) weights.put(si.slot(), si.weight());
    List<Integer> order = new ArrayList<>(pending);
    // List.sort is stable: equal weights keep the caller's order
    order.sort(Comparator.comparingDouble((Integer slot) -> weights.getOrDefault(slot, SlotWeight.MIN)).reversed());
    SlotLoads loads = new SlotLoads(workers, slots, pending);
    List<Move> moves = new ArrayList<>();
    for (int slot : order) {
      String to = loads.lightest();
      moves.add(new Move(slot, null, to));
      loads.add(slot, weights.getOrDefault(slot, SlotWeight.MIN), to);
    }
    return List.copyOf(moves);
  }

  /**
   * Hands over up to {@code batch} of {@code draining}'s slots at a time: the slots it already has MOVING
   * use up part of the batch, the rest is filled with its ACTIVE slots, heaviest first (then by slot id),
   * each to the least-loaded target at that point. No cooldown applies: a leaving worker must empty.
   * Empty when there is no target other than {@code draining} itself.
   */
  public static List<Move> drain(String draining, List<String> targets, List<SlotInfo> slots, int batch) {
    Set<String> to = workerSet(targets, draining);
    if (draining == null || to.isEmpty()) return List.of();
    int alreadyMoving = 0;
    List<SlotInfo> active = new ArrayList<>();
    for (SlotInfo si : distinct(slots)) {
      if (!draining.equals(si.owner())) continue;
      if (si.state() == SlotState.MOVING) alreadyMoving++;
      else if (si.state() == SlotState.ACTIVE) active.add(si);
    }
    int room = Math.max(0, batch - alreadyMoving);
    active.sort(Comparator.comparingDouble(SlotInfo::weight).reversed().thenComparingInt(SlotInfo::slot));
    SlotLoads loads = new SlotLoads(to, slots, Set.of());
    List<Move> moves = new ArrayList<>();
    for (SlotInfo si : active.subList(0, Math.min(room, active.size()))) {
      String target = loads.lightest();
      moves.add(new Move(si.slot(), draining, target));
      loads.add(si.slot(), si.weight(), target);
    }
    return List.copyOf(moves);
  }

  /**
   * A slot whose old owner released it ({@code mayReturn}: it may go back to that owner when nobody else
   * can take it) or did not release it in time (it is being fenced: never back), and where the leader
   * meant it to go.
   */
  public record Release(int slot, String owner, String target, boolean mayReturn) {}

  /**
   * Where released slots go: to their intended target while it is active, else to the least-loaded
   * active worker other than the old owner, else (when {@code mayReturn}) back to the old owner if it is
   * the only active one left; a slot nobody can take yet gets no move. Loads count every assignment before the next one.
   */
  public static List<Move> handover(List<String> activeWorkers, List<SlotInfo> slots, List<Release> released) {
    Set<String> workers = workerSet(activeWorkers, null);
    if (workers.isEmpty() || released == null || released.isEmpty()) return List.of();
    Map<Integer, Double> weights = new TreeMap<>();
    for (SlotInfo si : distinct(slots)) weights.put(si.slot(), si.weight());
    SlotLoads loads = new SlotLoads(workers, slots, Set.of());
    List<Move> moves = new ArrayList<>();
    for (Release r : released) {
      String to = r.target() != null && workers.contains(r.target()) && !r.target().equals(r.owner()) ? r.target() : loads.lightest(r.owner());
      if (to == null && r.mayReturn() && workers.contains(r.owner())) to = r.owner();
      if (to == null) continue;
      moves.add(new Move(r.slot(), r.owner(), to));
      loads.add(r.slot(), weights.getOrDefault(r.slot(), SlotWeight.MIN), to);
    }
    return List.copyOf(moves);
  }

  /** The worker ids, without nulls, duplicates or {@code except}, sorted so that ties go to the smaller id. */
  static Set<String> workerSet(Collection<String> ids, String except) {
    Set<String> out = new TreeSet<>();
    if (ids != null) for (String id : ids) if (id != null && !id.equals(except)) out.add(id);
    return out;
  }

  /** One entry per slot id (the first one given), in slot order. */
  static Collection<SlotInfo> distinct(List<SlotInfo> slots) {
    Map<Integer, SlotInfo> bySlot = new TreeMap<>();
    if (slots != null) for (SlotInfo si : slots) bySlot.putIfAbsent(si.slot(), si);
    return bySlot.values();
  }

  /** The ACTIVE slots each source may give away in this plan, and the cooldown rules that apply. */
  private static final class Candidates {
    private final Map<String, List<SlotInfo>> movable = new TreeMap<>();
    private final Set<Integer> taken = new HashSet<>();
    private final Map<Integer, Long> lastSlotMoveMs;
    private final Map<String, Long> lastSourceMoveMs;
    private final long nowMs;
    private final Settings s;

    Candidates(Set<String> workers, List<SlotInfo> slots, Map<Integer, Long> lastSlotMoveMs,
        Map<String, Long> lastSourceMoveMs, long nowMs, Settings s) {
      for (SlotInfo si : distinct(slots)) {
        if (si.state() == SlotState.ACTIVE && si.owner() != null && workers.contains(si.owner())) {
          movable.computeIfAbsent(si.owner(), k -> new ArrayList<>()).add(si);
        }
      }
      this.lastSlotMoveMs = lastSlotMoveMs == null ? Map.of() : lastSlotMoveMs;
      this.lastSourceMoveMs = lastSourceMoveMs == null ? Map.of() : lastSourceMoveMs;
      this.nowMs = nowMs;
      this.s = s;
    }

    /** A slot planned once is not planned again in the same plan (it would just bounce back). */
    void taken(int slot) {
      taken.add(slot);
    }

    /**
     * The next move onto the lightest worker, or null. Sources are tried from the heaviest down (ties by
     * id); the first one holding a slot that strictly narrows its gap to the lightest gives the slot
     * closest to half that gap (ties by slot id).
     */
    Move next(SlotLoads loads, boolean withCooldowns) {
      Map<String, Double> perWorker = loads.perWorker();
      String light = loads.lightest();
      double lightLoad = perWorker.get(light);
      List<String> sources = new ArrayList<>(perWorker.keySet());
      sources.sort(Comparator.comparingDouble((String w) -> perWorker.get(w)).reversed().thenComparing(w -> w));
      for (String source : sources) {
        double gap = perWorker.get(source) - lightLoad;
        if (gap <= 0) break;
        if (withCooldowns && cooling(lastSourceMoveMs.get(source), s.sourceCooldownMs())) continue;
        SlotInfo best = null;
        double bestDistance = 0;
        for (SlotInfo si : movable.getOrDefault(source, List.of())) {
          if (taken.contains(si.slot())) continue;
          if (withCooldowns && cooling(lastSlotMoveMs.get(si.slot()), s.slotCooldownMs())) continue;
          double w = si.weight();
          if (!(w > 0 && w < gap)) continue;
          double distance = Math.abs(w - gap / 2);
          if (best == null || distance < bestDistance) {
            best = si;
            bestDistance = distance;
          }
        }
        if (best != null) return new Move(best.slot(), source, light);
      }
      return null;
    }

    private boolean cooling(Long lastMs, long cooldownMs) {
      return lastMs != null && nowMs - lastMs < cooldownMs;
    }
  }

  private static String reason(int moved, double before, double after, String stop, Settings s) {
    String threshold = pct(s.threshold());
    if (moved == 0) {
      String why = s.maxMoves() == 0 ? "move cap 0" : stop;
      return why + ": spread " + pct(before) + " > threshold " + threshold;
    }
    String head = "moved " + moved + " (cap " + s.maxMoves() + "): spread " + pct(before) + " -> " + pct(after);
    return stop == null ? head + " <= threshold " + threshold : head + " > threshold " + threshold + ", " + stop;
  }

  /** 0.125 -> "12.5%", 0.25 -> "25%". */
  static String pct(double fraction) {
    double p = fraction * 100;
    double whole = Math.rint(p);
    return Math.abs(p - whole) < 0.05
        ? String.format(Locale.ROOT, "%.0f%%", whole)
        : String.format(Locale.ROOT, "%.1f%%", p);
  }
}
