package dev.inspection.scheduler;

import dev.inspection.control.SlotState;
import dev.inspection.control.WorkerState;
import dev.inspection.scheduler.ControlStore.Bump;
import dev.inspection.scheduler.ControlStore.SlotMove;
import dev.inspection.scheduler.ControlStore.SlotRow;
import dev.inspection.scheduler.ControlStore.WorkerChange;
import dev.inspection.scheduler.ControlStore.WorkerRow;
import dev.inspection.scheduler.RebalancePlanner.Move;
import dev.inspection.scheduler.RebalancePlanner.Plan;
import dev.inspection.scheduler.RebalancePlanner.Release;
import dev.inspection.scheduler.RebalancePlanner.SlotInfo;
import dev.inspection.scheduler.ScaleOutPlanner.Signals;
import dev.inspection.scheduler.ScaleOutPlanner.Wave;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * What one leader round decides (seed 000 §4.1–§4.4 as corrected by D1, D6): a pure function from what the
 * round read to the one kind of change that is due, so the priority order is tested without a database.
 * The first kind that is due wins:
 * <ol>
 *   <li>worker states: a free liveness lock (the process died) or an old heartbeat → DEAD, SUSPECTED,
 *       QUARANTINE, WARMING, ACTIVE, a drained worker → OFFLINE;</li>
 *   <li>slots of dead workers and expired leases → ORPHANED, with an epoch bump;</li>
 *   <li>handovers: a slot its old owner released (DRAINING_OLD), or a MOVING slot whose owner did not
 *       release it in time → LOADING_NEW for the new owner, with an epoch bump;</li>
 *   <li>ORPHANED slots → LOADING_NEW on the least loaded ACTIVE workers, all at once; FREE slots (a new
 *       installation) the same way but in waves ({@link ScaleOutPlanner}: a worker gets its next wave once the
 *       last one has arrived);</li>
 *   <li>draining workers' slots → MOVING, a batch at a time;</li>
 *   <li>scale-out: slots → MOVING towards joining workers below their share, a wave each
 *       ({@link ScaleOutPlanner}, without the source cooldown);</li>
 *   <li>a rebalance when one is due and nothing is moving.</li>
 * </ol>
 * {@link ControlLoop} reads the snapshot, applies the decision with fenced writes and keeps the books.
 */
final class RoundPlanner {
  private RoundPlanner() {}

  /**
   * Everything a round decides from. {@code crashed}: workers whose liveness lock was free; {@code pastGrace}:
   * the leader's grace after election is over (before it nothing is declared dead or expired);
   * {@code rebalanceDue}: asked for, or the interval passed; the cooldown maps hold the last rebalance move
   * per slot and per source (ms); {@code weights}: slot → weight, asked for only by a round that places
   * slots (computing them may start a database read); {@code waves}: the last wave per worker, settled against
   * {@code slots} ({@link ScaleOutPlanner#settle}); {@code scaleOutWeights}: the weights the scale-out balances
   * by (without the owner-dependent batch time: see {@link ControlLoop}).
   */
  record Snapshot(List<WorkerRow> workers, List<SlotRow> slots, Set<String> crashed, long now, boolean pastGrace, boolean rebalanceDue,
      Map<Integer, Long> lastSlotMove, Map<String, Long> lastSourceMove, Supplier<Map<Integer, Double>> weights, Map<String, Wave> waves,
      Supplier<Map<Integer, Double>> scaleOutWeights) {
    /** The scale-out balances by the same weights as the rebalancer. */
    Snapshot(List<WorkerRow> workers, List<SlotRow> slots, Set<String> crashed, long now, boolean pastGrace, boolean rebalanceDue,
        Map<Integer, Long> lastSlotMove, Map<String, Long> lastSourceMove, Supplier<Map<Integer, Double>> weights, Map<String, Wave> waves) {
      this(workers, slots, crashed, now, pastGrace, rebalanceDue, lastSlotMove, lastSourceMove, weights, waves, weights);
    }

    /** No wave sent yet. */
    Snapshot(List<WorkerRow> workers, List<SlotRow> slots, Set<String> crashed, long now, boolean pastGrace, boolean rebalanceDue,
        Map<Integer, Long> lastSlotMove, Map<String, Long> lastSourceMove, Supplier<Map<Integer, Double>> weights) {
      this(workers, slots, crashed, now, pastGrace, rebalanceDue, lastSlotMove, lastSourceMove, weights, Map.of());
    }
  }

  /** The one kind of change a round makes. */
  sealed interface Decision permits WorkerChanges, Bumps, Moves, Nothing {}

  /** Step 1: worker state changes. */
  record WorkerChanges(List<WorkerChange> changes) implements Decision {}

  /** Steps 2–4: owner/epoch changes (orphans, handovers, assignments); {@code waves}: worker → planned size of a FREE-slot wave. */
  record Bumps(List<Bump> bumps, Map<String, Integer> waves) implements Decision {
    Bumps(List<Bump> bumps) {
      this(bumps, Map.of());
    }
  }

  /**
   * Steps 5–7: slots to mark MOVING; {@code rebalance} is the plan they come from, null for a drain or a
   * scale-out; {@code waves}: worker → planned size of a scale-out wave.
   */
  record Moves(List<SlotMove> moves, Plan rebalance, Map<String, Integer> waves) implements Decision {
    Moves(List<SlotMove> moves, Plan rebalance) {
      this(moves, rebalance, Map.of());
    }
  }

  /** Nothing to write; {@code rebalance} is the plan made this round (it moved nothing), null when none was due. */
  record Nothing(Plan rebalance) implements Decision {}

  /** The decision of one round. */
  static Decision decide(Snapshot in, ControlLoop.Settings settings) {
    List<WorkerChange> changes = workerChanges(in, settings);
    if (!changes.isEmpty()) return new WorkerChanges(changes);

    List<String> active = placeable(in.workers(), settings);
    Map<Integer, SlotRow> bySlot = new HashMap<>();
    for (SlotRow s : in.slots()) bySlot.put(s.slot(), s);
    Supplier<List<SlotInfo>> infos = memo(() -> infos(in.slots(), in.weights().get()));

    List<Bump> bumps = orphans(in);
    if (bumps.isEmpty()) bumps = handovers(in, active, infos, bySlot, settings);
    if (bumps.isEmpty()) bumps = assignments(in, active, infos, bySlot);
    if (!bumps.isEmpty()) return new Bumps(bumps);
    Map<String, Integer> room = room(in, active, settings);
    List<Bump> free = freeInWaves(in, active, infos, bySlot, room);
    if (!free.isEmpty()) return new Bumps(free, sizes(room, free.stream().map(Bump::newOwner).toList()));

    List<SlotMove> drains = drains(in, active, infos, bySlot, settings);
    if (!drains.isEmpty()) return new Moves(drains, null);
    Decision scaleOut = scaleOut(in, active, memo(() -> infos(in.slots(), in.scaleOutWeights().get())), bySlot, settings, room);
    if (scaleOut != null) return scaleOut;
    return rebalance(in, active, infos, bySlot, settings);
  }

  private static List<SlotInfo> infos(List<SlotRow> slots, Map<Integer, Double> weights) {
    List<SlotInfo> out = new ArrayList<>();
    for (SlotRow s : slots) out.add(new SlotInfo(s.slot(), s.owner(), s.state(), weights.getOrDefault(s.slot(), SlotWeight.MIN)));
    return out;
  }

  /** Room for a wave per placeable worker, from its last wave and its heartbeat. */
  private static Map<String, Integer> room(Snapshot in, List<String> active, ControlLoop.Settings settings) {
    Map<String, Signals> signals = new HashMap<>();
    for (WorkerRow w : in.workers()) signals.put(w.id(), Signals.of(w.metrics()));
    Map<String, Integer> activeHeld = new HashMap<>();
    for (SlotRow s : in.slots()) if (s.owner() != null && s.state() == SlotState.ACTIVE) activeHeld.merge(s.owner(), 1, Integer::sum);
    return ScaleOutPlanner.room(active, in.waves(), signals, activeHeld, settings.waves());
  }

  private static Map<String, Integer> sizes(Map<String, Integer> room, List<String> targets) {
    Map<String, Integer> out = new TreeMap<>();
    for (String t : targets) out.put(t, room.get(t));
    return out;
  }

  /** FREE slots (a new installation): a wave per worker whose last wave has arrived. */
  private static List<Bump> freeInWaves(Snapshot in, List<String> active, Supplier<List<SlotInfo>> infos, Map<Integer, SlotRow> bySlot,
      Map<String, Integer> room) {
    List<Integer> free = in.slots().stream().filter(s -> s.state() == SlotState.FREE).map(SlotRow::slot).toList();
    if (free.isEmpty() || active.isEmpty()) return List.of();
    List<Bump> out = new ArrayList<>();
    for (Move m : ScaleOutPlanner.assignFree(active, infos.get(), free, room)) out.add(bump(bySlot.get(m.slot()), m.to(), SlotState.LOADING_NEW, "cold start"));
    return out;
  }

  /** A wave to each joining worker below its share whose last wave has arrived, once no slot is unowned. */
  private static Decision scaleOut(Snapshot in, List<String> active, Supplier<List<SlotInfo>> infos, Map<Integer, SlotRow> bySlot,
      ControlLoop.Settings settings, Map<String, Integer> room) {
    boolean unowned = in.slots().stream().anyMatch(s -> s.state() == SlotState.FREE || s.state() == SlotState.ORPHANED);
    if (unowned || active.size() < 2) return null;
    Map<String, Long> activeFor = new HashMap<>();
    for (WorkerRow w : in.workers()) if (active.contains(w.id())) activeFor.put(w.id(), w.stateAgeMs());
    Set<String> joining = ScaleOutPlanner.joining(activeFor, settings.waves());
    if (joining.isEmpty()) return null;
    List<Move> planned = ScaleOutPlanner.scaleOut(active, joining, infos.get(), in.lastSlotMove(), in.now(), settings.planner().slotCooldownMs(), room);
    if (planned.isEmpty()) return null;
    List<SlotMove> moves = new ArrayList<>();
    for (Move m : planned) moves.add(new SlotMove(bySlot.get(m.slot()), m.to(), "scale-out"));
    return new Moves(moves, null, sizes(room, planned.stream().map(Move::to).toList()));
  }

  /** The workers slots may go to: ACTIVE with a fresh heartbeat (one that stopped renewing would never load them), by id. */
  static List<String> placeable(List<WorkerRow> workers, ControlLoop.Settings settings) {
    long fresh = 2 * settings.heartbeatMs() + 1000;
    return workers.stream().filter(w -> w.state() == WorkerState.ACTIVE && w.heartbeatAgeMs() <= fresh).map(WorkerRow::id).sorted().toList();
  }

  private static List<WorkerChange> workerChanges(Snapshot in, ControlLoop.Settings settings) {
    Map<String, Integer> owned = new HashMap<>();
    for (SlotRow s : in.slots()) if (s.owner() != null) owned.merge(s.owner(), 1, Integer::sum);
    boolean anyActive = in.workers().stream().anyMatch(w -> w.state() == WorkerState.ACTIVE);
    List<WorkerChange> changes = new ArrayList<>();
    for (WorkerRow w : in.workers()) {
      review(w, in.crashed().contains(w.id()), in.pastGrace(), anyActive, owned.getOrDefault(w.id(), 0), settings).ifPresent(changes::add);
    }
    return changes;
  }

  /** Slots whose owner is dead or gone, and leases nobody renewed (a released slot waits for its handover instead). */
  private static List<Bump> orphans(Snapshot in) {
    Map<String, WorkerState> state = new HashMap<>();
    for (WorkerRow w : in.workers()) state.put(w.id(), w.state());
    List<Bump> orphan = new ArrayList<>();
    for (SlotRow s : in.slots()) {
      if (s.owner() == null || !s.state().owned() || s.state() == SlotState.DRAINING_OLD) continue;
      WorkerState ws = state.get(s.owner());
      boolean ownerGone = ws == null || ws == WorkerState.DEAD || ws == WorkerState.OFFLINE || ws == WorkerState.QUARANTINE;
      if (ownerGone) orphan.add(bump(s, null, SlotState.ORPHANED, "owner " + ws));
      else if (s.expired() && in.pastGrace()) orphan.add(bump(s, null, SlotState.ORPHANED, "lease expired"));
    }
    return orphan;
  }

  /**
   * Released by the old owner, or not released in time (the epoch bump fences the old owner, which never
   * gets its own slot back). Slots nobody can take yet stay released and unconsumed until a worker is ACTIVE.
   */
  private static List<Bump> handovers(Snapshot in, List<String> active, Supplier<List<SlotInfo>> infos, Map<Integer, SlotRow> bySlot,
      ControlLoop.Settings settings) {
    List<Release> released = new ArrayList<>();
    for (SlotRow s : in.slots()) {
      boolean overdue = s.state() == SlotState.MOVING && s.stateAgeMs() > settings.moveTimeoutMs();
      if (s.state() == SlotState.DRAINING_OLD || overdue) {
        released.add(new Release(s.slot(), s.owner(), s.target(), s.state() == SlotState.DRAINING_OLD));
      }
    }
    if (released.isEmpty()) return List.of();
    List<Bump> handover = new ArrayList<>();
    for (Move m : RebalancePlanner.handover(active, infos.get(), released)) {
      SlotRow s = bySlot.get(m.slot());
      handover.add(bump(s, m.to(), SlotState.LOADING_NEW, s.state() == SlotState.DRAINING_OLD ? "handover" : "move timeout"));
    }
    return handover;
  }


  /** ORPHANED slots (their owner died or its lease expired): to the least loaded workers at once, never held back. */
  private static List<Bump> assignments(Snapshot in, List<String> active, Supplier<List<SlotInfo>> infos, Map<Integer, SlotRow> bySlot) {
    List<Integer> unowned = in.slots().stream().filter(s -> s.state() == SlotState.ORPHANED).map(SlotRow::slot).toList();
    if (unowned.isEmpty() || active.isEmpty()) return List.of();
    List<Bump> assign = new ArrayList<>();
    for (Move m : RebalancePlanner.assign(active, infos.get(), unowned)) assign.add(bump(bySlot.get(m.slot()), m.to(), SlotState.LOADING_NEW, "assign"));
    return assign;
  }

  private static List<SlotMove> drains(Snapshot in, List<String> active, Supplier<List<SlotInfo>> infos, Map<Integer, SlotRow> bySlot,
      ControlLoop.Settings settings) {
    List<SlotMove> moves = new ArrayList<>();
    for (WorkerRow w : in.workers()) {
      if (w.state() != WorkerState.DRAINING) continue;
      List<String> others = active.stream().filter(a -> !a.equals(w.id())).toList();
      for (Move m : RebalancePlanner.drain(w.id(), others, infos.get(), settings.drainBatch())) moves.add(new SlotMove(bySlot.get(m.slot()), m.to(), "drain"));
    }
    return moves;
  }

  /** A rebalance only when one is due, some worker can take slots and no slot is on its way anywhere. */
  private static Decision rebalance(Snapshot in, List<String> active, Supplier<List<SlotInfo>> infos, Map<Integer, SlotRow> bySlot,
      ControlLoop.Settings settings) {
    boolean moving = in.slots().stream().anyMatch(s -> s.state() == SlotState.MOVING || s.state() == SlotState.LOADING_NEW
        || s.state() == SlotState.DRAINING_OLD);
    if (moving || active.isEmpty() || !in.rebalanceDue()) return new Nothing(null);
    Plan plan = RebalancePlanner.rebalance(active, infos.get(), in.lastSlotMove(), in.lastSourceMove(), in.now(), settings.planner());
    if (plan.moves().isEmpty()) return new Nothing(plan);
    List<SlotMove> moves = new ArrayList<>();
    for (Move m : plan.moves()) moves.add(new SlotMove(bySlot.get(m.slot()), m.to(), "rebalance"));
    return new Moves(moves, plan);
  }

  private static Bump bump(SlotRow s, String newOwner, SlotState to, String reason) {
    return new Bump(s.slot(), s.epoch(), s.state(), newOwner, to, reason);
  }

  /**
   * The state change a worker is due, if any. {@code lockFree}: the worker's liveness lock could be taken —
   * its process is gone.
   */
  static Optional<WorkerChange> review(WorkerRow w, boolean lockFree, boolean pastGrace, boolean anyActive, int ownedSlots, ControlLoop.Settings s) {
    WorkerState st = w.state();
    long hb = w.heartbeatAgeMs();
    if (st.live() && pastGrace && lockFree) return change(w, WorkerState.DEAD, "liveness lock free: the process is gone");
    if (st.live() && pastGrace && hb > s.deadMs()) return change(w, WorkerState.DEAD, "no heartbeat for " + hb + " ms");
    switch (st) {
      case ACTIVE:
        if (pastGrace && hb > s.suspectMs()) return change(w, WorkerState.SUSPECTED, "no heartbeat for " + hb + " ms");
        break;
      case SUSPECTED:
        if (hb <= s.suspectMs()) return change(w, WorkerState.ACTIVE, "heartbeat is back");
        break;
      case DEAD:
        // back only if it heartbeat after it was declared dead and its process still holds the liveness lock
        if (hb < w.stateAgeMs() && hb <= s.suspectMs() && !lockFree) return change(w, WorkerState.QUARANTINE, "a worker declared dead is heartbeating again");
        break;
      case QUARANTINE:
        if (w.stateAgeMs() >= s.quarantineMs()) return change(w, WorkerState.WARMING, "quarantine over");
        break;
      case REGISTERED:
        return change(w, WorkerState.WARMING, "registered");
      case WARMING:
        if (!anyActive) return change(w, WorkerState.ACTIVE, "no ACTIVE worker: cold start skips the warm-up");
        if (w.stateAgeMs() >= s.warmupMs()) return change(w, WorkerState.ACTIVE, "warmed up for " + w.stateAgeMs() + " ms");
        break;
      case DRAINING:
        if (ownedSlots == 0) return change(w, WorkerState.OFFLINE, "drained: holds no slot");
        break;
      default:
        break;
    }
    return Optional.empty();
  }

  private static Optional<WorkerChange> change(WorkerRow w, WorkerState to, String why) {
    if (!w.state().canMoveTo(to)) return Optional.empty();
    return Optional.of(new WorkerChange(w.id(), w.state(), to, why));
  }

  /** A value computed on first use, at most once. */
  private static <T> Supplier<T> memo(Supplier<T> compute) {
    Object[] box = new Object[1];
    return () -> {
      if (box[0] == null) box[0] = compute.get();
      @SuppressWarnings("unchecked")
      T t = (T) box[0];
      return t;
    };
  }
}
