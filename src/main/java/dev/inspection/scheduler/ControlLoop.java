package dev.inspection.scheduler;

import dev.inspection.control.SlotState;
import dev.inspection.control.WorkerState;
import dev.inspection.messaging.SlotHash;
import dev.inspection.metrics.Metrics;
import dev.inspection.scheduler.ControlStore.Bump;
import dev.inspection.scheduler.ControlStore.SlotRow;
import dev.inspection.scheduler.ControlStore.WorkerChange;
import dev.inspection.scheduler.ControlStore.WorkerRow;
import dev.inspection.scheduler.RebalancePlanner.Move;
import dev.inspection.scheduler.RebalancePlanner.SlotInfo;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the leader does (seed 000 §4.1–§4.4 as corrected by D1, D2, D6). Each round reads every worker and
 * every lease, then makes the first kind of change that is due, in this order, and runs again at once if
 * it changed something:
 * <ol>
 *   <li>worker states: a free liveness lock (the process died) or an old heartbeat → DEAD, SUSPECTED,
 *       QUARANTINE, WARMING, ACTIVE, a drained worker → OFFLINE;</li>
 *   <li>slots of dead workers and expired leases → ORPHANED, with an epoch bump;</li>
 *   <li>handovers: a slot its old owner released (DRAINING_OLD), or a MOVING slot whose owner did not
 *       release it in time → LOADING_NEW for the new owner, with an epoch bump;</li>
 *   <li>FREE and ORPHANED slots → LOADING_NEW on the least loaded ACTIVE workers;</li>
 *   <li>draining workers' slots → MOVING, a batch at a time;</li>
 *   <li>a rebalance when one is due and nothing is moving.</li>
 * </ol>
 * Every write is fenced by the leader's term and is a compare-and-set on what was read.
 */
public final class ControlLoop {
  private static final Logger log = LoggerFactory.getLogger(ControlLoop.class);

  /** Thresholds; all from configuration. */
  public record Settings(long tickMs, long heartbeatMs, long suspectMs, long deadMs, long warmupMs, long quarantineMs, long leaseTtlMs, long expiryGraceMs,
      long moveTimeoutMs, long leaderGraceMs, int drainBatch, long rebalanceIntervalMs, RebalancePlanner.Settings planner,
      SlotWeight.Coefficients weights, int totalSlots) {}

  private final Vertx vertx;
  /** Every round runs on this context: kicks from the HTTP API or Redis hop here first. */
  private final io.vertx.core.Context context;
  private final ControlStore store;
  private final Leadership leadership;
  private final Consumer<String> announce;
  private final Metrics metrics;
  private final Clock clock;
  private final Settings settings;
  private final Map<Integer, Long> lastSlotMove = new HashMap<>();
  private final Map<String, Long> lastSourceMove = new HashMap<>();
  private Map<Integer, Long> devices = Map.of();
  private Map<Integer, Long> critical = Map.of();
  private long weightsReadAt;
  private long electedAt;
  private long lastRebalance;
  private boolean rebalanceDue;
  private boolean busy;
  private boolean again;
  private long timer = -1;
  private volatile int activeWorkers;
  private volatile String lastPlan = "";

  public ControlLoop(Vertx vertx, ControlStore store, Leadership leadership, Consumer<String> announce, Metrics metrics, Clock clock,
      Settings settings) {
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
    this.store = store;
    this.leadership = leadership;
    this.announce = announce;
    this.metrics = metrics;
    this.clock = clock;
    this.settings = settings;
  }

  public int activeWorkers() {
    return activeWorkers;
  }

  public String lastPlan() {
    return lastPlan;
  }

  public void elected() {
    electedAt = clock.millis();
    rebalanceDue = true;
    lastSlotMove.clear();
    lastSourceMove.clear();
    weightsReadAt = 0;
    long window = Math.max(settings.planner().slotCooldownMs(), settings.planner().sourceCooldownMs());
    store.cooldowns(window, lastSlotMove, lastSourceMove).onFailure(e -> log.warn("cannot read recent moves for cooldowns: {}", e.getMessage()));
    if (timer < 0) timer = vertx.setPeriodic(settings.tickMs(), t -> kick());
    kick();
  }

  public void deposed() {
    if (timer >= 0) vertx.cancelTimer(timer);
    timer = -1;
  }

  /** Runs a round now (a notification arrived), or right after the one in progress. */
  public void kick() {
    if (io.vertx.core.Vertx.currentContext() != context) {
      context.runOnContext(v -> kick());
      return;
    }
    if (!leadership.leading()) return;
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    again = false;
    round().onComplete(ar -> {
      busy = false;
      if (ar.failed()) {
        if (!(ar.cause() instanceof Leadership.Deposed)) log.warn("scheduler round failed: {}", ar.cause().getMessage());
      } else if (ar.result()) {
        announce.accept("leader " + leadership.term());
        again = true;
      }
      if (again) vertx.runOnContext(v -> kick());
    });
  }

  /** Request a rebalance at the next round where nothing is moving. */
  public void rebalanceSoon() {
    context.runOnContext(v -> {
      rebalanceDue = true;
      kick();
    });
  }

  private boolean pastGrace() {
    return clock.millis() - electedAt >= settings.leaderGraceMs();
  }

  /** One round: true when it changed something. */
  private Future<Boolean> round() {
    return store.workers().compose(workers -> store.slots(settings.expiryGraceMs()).compose(slots -> {
      List<String> probe = new ArrayList<>();
      if (pastGrace()) for (WorkerRow w : workers) if (w.state().live() || w.state() == WorkerState.DEAD) probe.add(w.id());
      return store.crashed(probe).compose(crashed -> decide(workers, slots, crashed));
    }));
  }

  private Future<Boolean> decide(List<WorkerRow> workers, List<SlotRow> slots, Set<String> crashed) {
    long term = leadership.term();
    Map<String, Integer> owned = new HashMap<>();
    for (SlotRow s : slots) if (s.owner() != null) owned.merge(s.owner(), 1, Integer::sum);
    boolean anyActive = workers.stream().anyMatch(w -> w.state() == WorkerState.ACTIVE);

    // 1. worker states
    List<WorkerChange> changes = new ArrayList<>();
    for (WorkerRow w : workers) {
      review(w, crashed.contains(w.id()), pastGrace(), anyActive, owned.getOrDefault(w.id(), 0), settings).ifPresent(changes::add);
    }
    if (!changes.isEmpty()) {
      return leadership.fenced(c -> ControlStore.applyWorkerChanges(c, changes, term)).map(done -> {
        for (WorkerChange ch : changes) {
          if (!done.contains(ch.worker())) continue;
          metrics.workerTransition(ch.from().name(), ch.to().name());
          log.info("worker {}: {} -> {} ({})", ch.worker(), ch.from(), ch.to(), ch.reason());
          if (ch.to() == WorkerState.ACTIVE || ch.to() == WorkerState.DEAD || ch.to() == WorkerState.DRAINING) rebalanceDue = true;
        }
        return !done.isEmpty();
      });
    }

    Map<String, WorkerState> state = new HashMap<>();
    for (WorkerRow w : workers) state.put(w.id(), w.state());
    // slots go only to ACTIVE workers whose heartbeat is fresh: a worker that stopped renewing would never load them
    long fresh = 2 * settings.heartbeatMs() + 1000;
    List<String> active = workers.stream().filter(w -> w.state() == WorkerState.ACTIVE && w.heartbeatAgeMs() <= fresh)
        .map(WorkerRow::id).sorted().toList();
    activeWorkers = active.size();

    // 2. slots whose owner is dead or gone, and leases nobody renewed
    List<Bump> orphan = new ArrayList<>();
    for (SlotRow s : slots) {
      if (s.owner() == null || !s.state().owned()) continue;
      WorkerState ws = state.get(s.owner());
      boolean ownerGone = ws == null || ws == WorkerState.DEAD || ws == WorkerState.OFFLINE || ws == WorkerState.QUARANTINE;
      boolean expired = s.expired() && pastGrace() && s.state() != SlotState.DRAINING_OLD;
      if (ownerGone && s.state() != SlotState.DRAINING_OLD) orphan.add(new Bump(s.slot(), s.epoch(), null, SlotState.ORPHANED, "owner " + ws));
      else if (expired) orphan.add(new Bump(s.slot(), s.epoch(), null, SlotState.ORPHANED, "lease expired"));
    }
    if (!orphan.isEmpty()) return bump(orphan, term);

    Map<Integer, SlotRow> bySlot = new HashMap<>();
    for (SlotRow s : slots) bySlot.put(s.slot(), s);
    // slot weights are needed only by a round that places slots
    java.util.function.Supplier<List<SlotInfo>> infos = memo(() -> {
      Map<Integer, Double> weights = weights(workers);
      List<SlotInfo> out = new ArrayList<>();
      for (SlotRow s : slots) out.add(new SlotInfo(s.slot(), s.owner(), s.state(), weights.getOrDefault(s.slot(), SlotWeight.MIN)));
      return out;
    });

    // 3. handovers: released by the old owner, or not released in time (the epoch bump fences the old owner)
    List<RebalancePlanner.Release> released = new ArrayList<>();
    for (SlotRow s : slots) {
      boolean overdue = s.state() == SlotState.MOVING && s.stateAgeMs() > settings.moveTimeoutMs();
      // an overdue owner is being fenced, so it never gets its own slot back
      if (s.state() == SlotState.DRAINING_OLD || overdue) {
        released.add(new RebalancePlanner.Release(s.slot(), s.owner(), s.target(), s.state() == SlotState.DRAINING_OLD));
      }
    }
    if (!released.isEmpty()) {
      List<Bump> handover = new ArrayList<>();
      for (Move m : RebalancePlanner.handover(active, infos.get(), released)) {
        SlotRow s = bySlot.get(m.slot());
        handover.add(new Bump(m.slot(), s.epoch(), m.to(), SlotState.LOADING_NEW,
            s.state() == SlotState.DRAINING_OLD ? "handover" : "move timeout"));
      }
      // slots nobody can take yet stay released and unconsumed until a worker is ACTIVE
      if (!handover.isEmpty()) return bump(handover, term);
    }

    // 4. unowned slots
    List<Integer> unowned = slots.stream().filter(s -> s.state() == SlotState.FREE || s.state() == SlotState.ORPHANED).map(SlotRow::slot).toList();
    if (!unowned.isEmpty() && !active.isEmpty()) {
      List<Bump> assign = new ArrayList<>();
      for (Move m : RebalancePlanner.assign(active, infos.get(), unowned)) {
        assign.add(new Bump(m.slot(), bySlot.get(m.slot()).epoch(), m.to(), SlotState.LOADING_NEW, "assign"));
      }
      if (!assign.isEmpty()) return bump(assign, term);
    }

    // 5. drains
    List<SlotRow> moveRows = new ArrayList<>();
    List<String> targets = new ArrayList<>();
    List<String> reasons = new ArrayList<>();
    for (WorkerRow w : workers) {
      if (w.state() != WorkerState.DRAINING) continue;
      List<String> others = active.stream().filter(a -> !a.equals(w.id())).toList();
      for (Move m : RebalancePlanner.drain(w.id(), others, infos.get(), settings.drainBatch())) {
        moveRows.add(bySlot.get(m.slot()));
        targets.add(m.to());
        reasons.add("drain");
      }
    }
    if (!moveRows.isEmpty()) return move(moveRows, targets, reasons, term, false);

    // 6. rebalance
    boolean moving = slots.stream().anyMatch(s -> s.state() == SlotState.MOVING || s.state() == SlotState.LOADING_NEW
        || s.state() == SlotState.DRAINING_OLD);
    long now = clock.millis();
    if (!moving && !active.isEmpty() && (rebalanceDue || now - lastRebalance >= settings.rebalanceIntervalMs())) {
      rebalanceDue = false;
      lastRebalance = now;
      RebalancePlanner.Plan plan = RebalancePlanner.rebalance(active, infos.get(), lastSlotMove, lastSourceMove, now, settings.planner());
      lastPlan = plan.reason();
      log.debug("rebalance: {}", plan.reason());
      if (!plan.moves().isEmpty()) {
        log.info("rebalance: {}", plan.reason());
        for (Move m : plan.moves()) {
          moveRows.add(bySlot.get(m.slot()));
          targets.add(m.to());
          reasons.add("rebalance");
        }
        return move(moveRows, targets, reasons, term, true);
      }
    }
    return Future.succeededFuture(false);
  }

  /**
   * The state change a worker is due, if any: a pure function of what was read, so it is unit-tested
   * without a database. {@code lockFree}: the worker's liveness lock could be taken — its process is gone.
   */
  static Optional<WorkerChange> review(WorkerRow w, boolean lockFree, boolean pastGrace, boolean anyActive, int ownedSlots, Settings s) {
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

  private Future<Boolean> bump(List<Bump> bumps, long term) {
    return leadership.fenced(c -> ControlStore.applyBumps(c, bumps, term, settings.leaseTtlMs())).map(done -> {
      for (Bump b : bumps) {
        if (!done.contains(b.slot())) continue;
        metrics.slotTransition(b.reason(), b.newState().name());
      }
      if (!done.isEmpty()) {
        Map<String, Integer> byReason = new HashMap<>();
        for (Bump b : bumps) if (done.contains(b.slot())) byReason.merge(b.reason() + " -> " + b.newState(), 1, Integer::sum);
        log.info("leases: {}", byReason);
      }
      return !done.isEmpty();
    });
  }

  private Future<Boolean> move(List<SlotRow> rows, List<String> targets, List<String> reasons, long term, boolean rebalance) {
    return leadership.fenced(c -> ControlStore.applyMoves(c, rows, targets, reasons, term)).map(done -> {
      long now = clock.millis();
      for (int i = 0; i < rows.size(); i++) {
        SlotRow r = rows.get(i);
        if (!done.contains(r.slot())) continue;
        metrics.slotTransition(reasons.get(i), SlotState.MOVING.name());
        if (rebalance) {
          lastSlotMove.put(r.slot(), now);
          lastSourceMove.put(r.owner(), now);
        }
      }
      if (!done.isEmpty()) log.info("{}: {} slot(s) MOVING", reasons.get(0), done.size());
      return !done.isEmpty();
    });
  }

  /** A value computed on first use, at most once. */
  private static <T> java.util.function.Supplier<T> memo(java.util.function.Supplier<T> compute) {
    Object[] box = new Object[1];
    return () -> {
      if (box[0] == null) box[0] = compute.get();
      @SuppressWarnings("unchecked")
      T t = (T) box[0];
      return t;
    };
  }

  /**
   * Slot weights (seed 000 §4.3): device and critical-device counts from the database (read again every
   * rebalance interval), message rate, backlog and batch time from what workers report with their
   * heartbeats ({@code backlog_metrics.slots}).
   */
  private Map<Integer, Double> weights(List<WorkerRow> workers) {
    long now = clock.millis();
    if (now - weightsReadAt >= settings.rebalanceIntervalMs()) {
      weightsReadAt = now;
      store.devicesPerSlot().onSuccess(d -> devices = d);
      store.criticalDevices().onSuccess(ids -> {
        Map<Integer, Long> c = new HashMap<>();
        for (String id : ids) c.merge(SlotHash.slotOf(id, settings.totalSlots()), 1L, Long::sum);
        critical = c;
      });
    }
    Map<Integer, JsonObject> reported = new HashMap<>();
    for (WorkerRow w : workers) {
      JsonObject perSlot = w.metrics().getJsonObject("slots");
      if (perSlot == null) continue;
      for (String k : perSlot.fieldNames()) {
        try {
          reported.put(Integer.parseInt(k), perSlot.getJsonObject(k));
        } catch (RuntimeException ignored) {
          // a malformed entry only loses its weight terms
        }
      }
    }
    Map<Integer, Double> out = new HashMap<>();
    for (int s = 0; s < settings.totalSlots(); s++) {
      JsonObject r = reported.getOrDefault(s, new JsonObject());
      out.put(s, SlotWeight.weight(settings.weights(), devices.getOrDefault(s, 0L), r.getDouble("rate", 0.0), r.getLong("backlog", 0L),
          r.getDouble("ms", 0.0), critical.getOrDefault(s, 0L)));
    }
    return out;
  }
}
