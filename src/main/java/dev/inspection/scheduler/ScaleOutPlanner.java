package dev.inspection.scheduler;

import dev.inspection.control.SlotState;
import dev.inspection.scheduler.ControlStore.SlotRow;
import dev.inspection.scheduler.RebalancePlanner.Move;
import dev.inspection.scheduler.RebalancePlanner.SlotInfo;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Slots in waves (issue 14, seed 000 §4.4 A and B): a worker that joins gets its fair share within a minute,
 * and the first worker of an empty fleet opens its slots gradually instead of all at once. Pure: the leader
 * keeps the {@link Wave books}; this class decides.
 *
 * <p><b>Waves.</b> The slots sent to one worker together form a wave; the next wave to it is planned only
 * when every slot of the previous one has arrived (ACTIVE on it, or gone elsewhere). Its size follows what
 * the worker has shown it can load: the first wave is {@code firstWave}; a wave that arrived within
 * {@code fastMs} while the worker's commit p99 and its backlog per slot (from its heartbeat) stay under their
 * limits doubles the next one (up to {@code maxWave}); one that took longer than {@code slowMs}, or a commit
 * p99 over the limit, halves it (down to {@code minWave}); anything between keeps it.
 *
 * <p><b>Cold start.</b> FREE slots (a new installation) go out in waves, each worker at most its wave per
 * round. Slots whose owner died (ORPHANED) are not held back: they must be consumed again at once.
 *
 * <p><b>Scale-out and the source cooldown.</b> A worker ACTIVE for less than {@code joinWindowMs} that is
 * below the fair share (the mean load by slot weights) is <i>joining</i>. Scale-out moves go to joining
 * workers only, from workers above the mean, and only a slot that leaves its source at least as heavy as
 * the target ({@code weight <= gap / 2}): a move can never make the pair want the slot back. The slot cooldown
 * holds for them as for every move (no slot moves twice within it). The <i>source</i> cooldown does not:
 * it is there to stop noisy weights from drawing the same worker down again and again, and a worker that just
 * joined with nothing is not noise — honouring it would hold a 256-slot scale-out to a few slots a minute.
 * The no-overshoot rule and the wave size bound what a joining worker takes instead. A joining worker stops
 * receiving when no such move is left: it is then within one slot's weight of the mean.
 */
public final class ScaleOutPlanner {
  private ScaleOutPlanner() {}

  /** Wave sizing and who counts as joining; all from configuration. */
  public record Settings(int firstWave, int minWave, int maxWave, long fastMs, long slowMs, double maxCommitP99Ms, double maxBacklogPerSlot,
      long joinWindowMs) {
    public Settings {
      if (minWave < 1) throw new IllegalArgumentException("minWave must be >= 1, was " + minWave);
      if (maxWave < minWave) throw new IllegalArgumentException("maxWave must be >= minWave (" + minWave + "), was " + maxWave);
      if (firstWave < minWave || firstWave > maxWave) {
        throw new IllegalArgumentException("firstWave must be within " + minWave + ".." + maxWave + ", was " + firstWave);
      }
      if (fastMs < 0 || slowMs < fastMs) throw new IllegalArgumentException("need 0 <= fastMs <= slowMs, was " + fastMs + " and " + slowMs);
      if (joinWindowMs < 0) throw new IllegalArgumentException("joinWindowMs must be >= 0, was " + joinWindowMs);
    }

    /** First wave 8, 2..64, fast under 5 s, slow over 15 s, commit p99 1 s, 200 waiting per slot, joining for 5 min. */
    public static Settings defaults() {
      return new Settings(8, 2, 64, 5_000, 15_000, 1_000, 200, 300_000);
    }
  }

  /** Slots sent to {@code target} together, planned as {@code size}; {@code finishedMs} is -1 while any is on its way. */
  public record Wave(String target, Set<Integer> slots, int size, long startedMs, long finishedMs) {
    public Wave {
      slots = Set.copyOf(slots);
    }

    public boolean inFlight() {
      return finishedMs < 0;
    }

    public long durationMs() {
      return inFlight() ? -1 : finishedMs - startedMs;
    }
  }

  /** What a worker's heartbeat says about its load: commit p99 (-1 unknown), deliveries waiting, slots held. */
  public record Signals(double commitP99Ms, long mailbox, int slotsHeld) {
    public static final Signals NONE = new Signals(-1, 0, 0);

    /** From the heartbeat's {@code backlog_metrics}; missing fields count as unknown / 0. */
    public static Signals of(JsonObject heartbeat) {
      if (heartbeat == null) return NONE;
      try {
        return new Signals(heartbeat.getDouble("commit_p99_ms", -1.0), heartbeat.getLong("mailbox", 0L), heartbeat.getInteger("slots_held", 0));
      } catch (RuntimeException malformed) {
        return NONE;
      }
    }

    double backlogPerSlot() {
      return slotsHeld <= 0 ? 0 : (double) mailbox / slotsHeld;
    }
  }

  /** The size of the next wave to a worker whose last wave was {@code last} (null: none yet). */
  public static int nextSize(Wave last, Signals now, Settings s) {
    if (last == null || last.inFlight()) return s.firstWave();
    Signals sig = now == null ? Signals.NONE : now;
    boolean commitsSlow = sig.commitP99Ms() > s.maxCommitP99Ms();
    if (last.durationMs() > s.slowMs() || commitsSlow) return Math.max(s.minWave(), last.size() / 2);
    boolean keepsUp = sig.backlogPerSlot() <= s.maxBacklogPerSlot();
    if (last.durationMs() <= s.fastMs() && keepsUp) return Math.min(s.maxWave(), last.size() * 2);
    return Math.max(s.minWave(), Math.min(s.maxWave(), last.size()));
  }

  /**
   * The books after a round's read: a wave in flight whose slots have all arrived (ACTIVE on its target) or
   * gone elsewhere (another owner, ORPHANED, FREE) is finished at {@code nowMs}. A slot still counts as on its way
   * while it is MOVING or DRAINING_OLD towards the target, or LOADING_NEW on it.
   */
  public static Map<String, Wave> settle(Map<String, Wave> waves, Collection<SlotRow> slots, long nowMs) {
    Map<Integer, SlotRow> bySlot = new HashMap<>();
    for (SlotRow r : slots) bySlot.put(r.slot(), r);
    Map<String, Wave> out = new TreeMap<>();
    for (Map.Entry<String, Wave> e : waves.entrySet()) {
      Wave w = e.getValue();
      boolean pending = false;
      if (w.inFlight()) {
        for (int slot : w.slots()) pending |= onItsWay(bySlot.get(slot), w.target());
      }
      out.put(e.getKey(), w.inFlight() && !pending ? new Wave(w.target(), w.slots(), w.size(), w.startedMs(), nowMs) : w);
    }
    return out;
  }

  private static boolean onItsWay(SlotRow r, String target) {
    if (r == null) return false;
    if (target.equals(r.owner())) return r.state() == SlotState.LOADING_NEW;
    return (r.state() == SlotState.MOVING || r.state() == SlotState.DRAINING_OLD) && target.equals(r.target());
  }

  /** Per worker that may take slots: 0 while a wave to it is in flight, else the size of its next wave. */
  public static Map<String, Integer> room(Collection<String> workers, Map<String, Wave> waves, Map<String, Signals> signals, Settings s) {
    Map<String, Integer> out = new TreeMap<>();
    for (String w : workers) {
      Wave last = waves.get(w);
      out.put(w, last != null && last.inFlight() ? 0 : nextSize(last, signals.get(w), s));
    }
    return out;
  }

  /**
   * FREE slots in waves: heaviest first, each to the least-loaded worker that still has room (ties by id),
   * counting every assignment before the next. A worker missing from {@code room} has none.
   */
  public static List<Move> assignFree(List<String> activeWorkers, List<SlotInfo> slots, List<Integer> free, Map<String, Integer> room) {
    Set<String> workers = RebalancePlanner.workerSet(activeWorkers, null);
    if (workers.isEmpty() || free.isEmpty()) return List.of();
    Map<Integer, Double> weights = new TreeMap<>();
    for (SlotInfo si : RebalancePlanner.distinct(slots)) weights.put(si.slot(), si.weight());
    List<Integer> order = new ArrayList<>(new TreeSet<>(free));
    order.sort(Comparator.comparingDouble((Integer slot) -> weights.getOrDefault(slot, SlotWeight.MIN)).reversed());
    SlotLoads loads = new SlotLoads(workers, slots, new HashSet<>(order));
    Map<String, Integer> left = new HashMap<>(room);
    List<Move> moves = new ArrayList<>();
    for (int slot : order) {
      String to = lightest(loads.perWorker(), w -> left.getOrDefault(w, 0) > 0);
      if (to == null) break;
      moves.add(new Move(slot, null, to));
      loads.add(slot, weights.getOrDefault(slot, SlotWeight.MIN), to);
      left.merge(to, -1, Integer::sum);
    }
    return List.copyOf(moves);
  }

  /** Workers ACTIVE for less than the join window (their state age), by id. */
  public static Set<String> joining(Map<String, Long> activeForMs, Settings s) {
    Set<String> out = new TreeSet<>();
    for (Map.Entry<String, Long> e : activeForMs.entrySet()) if (e.getValue() < s.joinWindowMs()) out.add(e.getKey());
    return out;
  }

  /**
   * Scale-out moves (see the class comment): repeatedly the lightest joining worker below the mean that has
   * room gets, from the heaviest worker above the mean that has one, the ACTIVE slot not in its slot cooldown
   * whose weight is at most half their gap and closest to what both need (the target's deficit, the source's
   * excess, half the gap). A joining worker for which no such slot exists is done. Ties by worker id, then slot id.
   */
  public static List<Move> scaleOut(List<String> activeWorkers, Set<String> joining, List<SlotInfo> slots, Map<Integer, Long> lastSlotMoveMs,
      long nowMs, long slotCooldownMs, Map<String, Integer> room) {
    Set<String> workers = RebalancePlanner.workerSet(activeWorkers, null);
    if (workers.size() < 2 || joining.isEmpty()) return List.of();
    SlotLoads loads = new SlotLoads(workers, slots, Set.of());
    Map<String, List<SlotInfo>> movable = new TreeMap<>();
    for (SlotInfo si : RebalancePlanner.distinct(slots)) {
      Long moved = lastSlotMoveMs == null ? null : lastSlotMoveMs.get(si.slot());
      boolean cooling = moved != null && nowMs - moved < slotCooldownMs;
      if (si.state() == SlotState.ACTIVE && workers.contains(si.owner()) && !cooling) movable.computeIfAbsent(si.owner(), k -> new ArrayList<>()).add(si);
    }
    Map<String, Integer> left = new TreeMap<>();
    for (String j : joining) if (workers.contains(j) && room.getOrDefault(j, 0) > 0) left.put(j, room.get(j));
    Set<Integer> taken = new HashSet<>();
    List<Move> moves = new ArrayList<>();
    while (true) {
      Map<String, Double> per = loads.perWorker();
      double mean = per.values().stream().mapToDouble(Double::doubleValue).sum() / per.size();
      String target = lightest(per, w -> left.getOrDefault(w, 0) > 0 && per.get(w) < mean);
      if (target == null) break;
      Move m = bestMove(per, mean, target, movable, taken);
      if (m == null) {
        left.remove(target);
        continue;
      }
      moves.add(m);
      taken.add(m.slot());
      loads.give(m.slot(), target);
      left.merge(target, -1, Integer::sum);
    }
    return List.copyOf(moves);
  }

  private static Move bestMove(Map<String, Double> per, double mean, String target, Map<String, List<SlotInfo>> movable, Set<Integer> taken) {
    List<String> sources = new ArrayList<>(per.keySet());
    sources.sort(Comparator.comparingDouble((String w) -> per.get(w)).reversed().thenComparing(w -> w));
    double t = per.get(target);
    for (String source : sources) {
      double s = per.get(source);
      if (s <= mean) break;
      if (source.equals(target)) continue;
      double half = (s - t) / 2;
      double want = Math.min(Math.min(mean - t, s - mean), half);
      SlotInfo best = null;
      for (SlotInfo si : movable.getOrDefault(source, List.of())) {
        if (taken.contains(si.slot()) || si.weight() > half) continue;
        if (best == null || Math.abs(si.weight() - want) < Math.abs(best.weight() - want)) best = si;
      }
      if (best != null) return new Move(best.slot(), source, target);
    }
    return null;
  }

  private static String lightest(Map<String, Double> per, java.util.function.Predicate<String> eligible) {
    String best = null;
    for (Map.Entry<String, Double> e : per.entrySet()) {
      if (!eligible.test(e.getKey())) continue;
      if (best == null || e.getValue() < per.get(best)) best = e.getKey();
    }
    return best;
  }
}
