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
 * {@code fastMs} while the worker's commit p99 (known: it has committed) and its backlog per slot (from its
 * heartbeat) stay under their limits doubles the next one (up to {@code maxWave}); one that took longer than {@code slowMs} halves it
 * (down to {@code minWave}); anything else keeps it. A move costs its old owner a release (cancel, commit and
 * ack what it holds) of several seconds however many slots it releases at once, so the thresholds are
 * seconds, not milliseconds, and a wave grows by doubling. A slot turns ACTIVE before the worker has done
 * much with it, so after a wave arrives the next waits for a heartbeat that reports the worker consuming
 * all of its slots: its commit p99 and backlog then include the last wave.
 *
 * <p><b>Cold start.</b> FREE slots (a new installation) go out in waves, each worker at most its wave per
 * round. Slots whose owner died (ORPHANED) are not held back: they must be consumed again at once.
 *
 * <p><b>Scale-out and the cooldowns.</b> A worker ACTIVE for less than {@code joinWindowMs} is <i>joining</i>
 * (not the one ACTIVE longest: a fleet's first worker joined nothing). Scale-out moves go only to joining workers
 * below the fair share (the mean load by slot weights), and only a slot lighter than twice the target's deficit, so the target always ends closer
 * to the mean than it was; it stops within one slot's weight of it. Sources are taken heaviest first; a
 * joining worker below the mean is never one. The <b>slot cooldown</b> holds as for every move: no slot
 * moves twice within it. The <b>source cooldown</b> does not apply: it is there so that noisy weights cannot
 * draw the same worker down round after round, and a worker that has just joined with nothing is not noise —
 * honouring it (with the rebalancer's 5 moves per round) held a 256-slot scale-out to about 5 slots a minute.
 * Why this cannot ping-pong: a slot that moved is not moved again within the slot cooldown, and the slots a
 * worker received while joining are all in it for as long as it joins (the join window, 5 min, is no longer
 * than the slot cooldown), so they cannot flow back; a joining worker below the mean is never a source; and a
 * worker past its join window is left to the rebalancer, which keeps both cooldowns. When the
 * only slots out of their cooldown sit on one worker (a third worker joining shortly after a second one),
 * that worker gives the newcomer its whole share and may end below the mean; the rebalancer evens that out
 * once the other slots' cooldown is over.
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

    /** First wave 16, 2..64, fast within 15 s, slow over 30 s, commit p99 1 s, 200 waiting per slot, joining for 5 min. */
    public static Settings defaults() {
      return new Settings(16, 2, 64, 15_000, 30_000, 1_000, 200, 300_000);
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
    if (last.durationMs() > s.slowMs()) return Math.max(s.minWave(), last.size() / 2);
    // no commit yet (p99 unknown) is no evidence: a cold start under a backlog could otherwise open everything before its first commit
    boolean keepsUp = sig.commitP99Ms() >= 0 && sig.commitP99Ms() <= s.maxCommitP99Ms() && sig.backlogPerSlot() <= s.maxBacklogPerSlot();
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

  /**
   * Per worker that may take slots: the size of its next wave; 0 while a wave to it is in flight, and 0 after
   * one arrived until the worker's heartbeat reports consuming at least the {@code activeHeld} slots it holds
   * ACTIVE — its commit latency and backlog must show the last wave before they can judge the next one.
   */
  public static Map<String, Integer> room(Collection<String> workers, Map<String, Wave> waves, Map<String, Signals> signals,
      Map<String, Integer> activeHeld, Settings s) {
    Map<String, Integer> out = new TreeMap<>();
    for (String w : workers) {
      Wave last = waves.get(w);
      Signals sig = signals.getOrDefault(w, Signals.NONE);
      boolean unseen = last != null && sig.slotsHeld() < activeHeld.getOrDefault(w, 0);
      out.put(w, last != null && (last.inFlight() || unseen) ? 0 : nextSize(last, sig, s));
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

  /**
   * Workers ACTIVE for less than the join window (their state age), by id — except the one ACTIVE longest
   * (ties: the smallest id): the first worker of a fleet joined nothing, it is where the others take from.
   */
  public static Set<String> joining(Map<String, Long> activeForMs, Settings s) {
    String founder = null;
    for (Map.Entry<String, Long> e : new TreeMap<>(activeForMs).entrySet()) {
      if (founder == null || e.getValue() > activeForMs.get(founder)) founder = e.getKey();
    }
    Set<String> out = new TreeSet<>();
    for (Map.Entry<String, Long> e : activeForMs.entrySet()) if (e.getValue() < s.joinWindowMs() && !e.getKey().equals(founder)) out.add(e.getKey());
    return out;
  }

  /**
   * Scale-out moves (see the class comment): repeatedly the lightest joining worker below the mean that has
   * room takes one slot: from the heaviest worker that has an ACTIVE slot out of its slot cooldown (never from
   * a joining worker below the mean), the one whose weight is below twice the target's deficit (so the target
   * ends closer to the mean than it was) and closest to what is wanted — the deficit, or the source's excess
   * over the mean when that is smaller. A joining worker for which no such slot exists is done. Ties by worker
   * id, then slot id.
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
      Move m = bestMove(per, mean, target, joining, movable, taken);
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

  private static Move bestMove(Map<String, Double> per, double mean, String target, Set<String> joining, Map<String, List<SlotInfo>> movable,
      Set<Integer> taken) {
    List<String> sources = new ArrayList<>(per.keySet());
    sources.sort(Comparator.comparingDouble((String w) -> per.get(w)).reversed().thenComparing(w -> w));
    double deficit = mean - per.get(target);
    for (String source : sources) {
      double s = per.get(source);
      if (source.equals(target) || (joining.contains(source) && s < mean)) continue;
      double want = s > mean ? Math.min(deficit, s - mean) : deficit;
      SlotInfo best = null;
      for (SlotInfo si : movable.getOrDefault(source, List.of())) {
        if (taken.contains(si.slot()) || !(si.weight() < 2 * deficit)) continue;
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
