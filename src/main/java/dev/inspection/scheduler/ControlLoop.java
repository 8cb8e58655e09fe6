package dev.inspection.scheduler;

import dev.inspection.control.SlotState;
import dev.inspection.control.WorkerState;
import dev.inspection.messaging.BrokerFence;
import dev.inspection.messaging.SlotHash;
import dev.inspection.metrics.Metrics;
import dev.inspection.scheduler.ControlStore.Bump;
import dev.inspection.scheduler.ControlStore.SlotMove;
import dev.inspection.scheduler.ControlStore.SlotRow;
import dev.inspection.scheduler.ControlStore.WorkerChange;
import dev.inspection.scheduler.ControlStore.WorkerRow;
import dev.inspection.scheduler.RebalancePlanner.Plan;
import dev.inspection.scheduler.RoundPlanner.Bumps;
import dev.inspection.scheduler.RoundPlanner.Decision;
import dev.inspection.scheduler.RoundPlanner.Moves;
import dev.inspection.scheduler.RoundPlanner.Nothing;
import dev.inspection.scheduler.RoundPlanner.Snapshot;
import dev.inspection.scheduler.RoundPlanner.WorkerChanges;
import io.micrometer.core.instrument.Counter;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the leader does (seed 000 §4.1–§4.4 as corrected by D1, D2, D6), as I/O around a pure planner: each
 * round reads every worker and every lease, asks {@link RoundPlanner} for the one kind of change that is
 * due, applies it and runs again at once if it changed something. Every write is fenced by the leader's
 * term and is a compare-and-set on what was read; metrics, logs and the rebalance cooldowns are kept here.
 * Everything runs on the context the loop was made on: calls from elsewhere (the HTTP API, Redis, the
 * leadership listener) hop there first.
 */
public final class ControlLoop {
  private static final Logger log = LoggerFactory.getLogger(ControlLoop.class);
  /** The reason {@link RoundPlanner} gives a handover whose old owner never released the slot. */
  private static final String MOVE_TIMEOUT = "move timeout";

  /** Thresholds; all from configuration. */
  public record Settings(long tickMs, long heartbeatMs, long suspectMs, long deadMs, long warmupMs, long quarantineMs, long leaseTtlMs, long expiryGraceMs,
      long moveTimeoutMs, long leaderGraceMs, int drainBatch, long rebalanceIntervalMs, RebalancePlanner.Settings planner,
      SlotWeight.Coefficients weights, int totalSlots, ScaleOutPlanner.Settings waves, long deviceCountIntervalMs) {
    /** With the default wave settings, the devices counted every rebalance interval. */
    public Settings(long tickMs, long heartbeatMs, long suspectMs, long deadMs, long warmupMs, long quarantineMs, long leaseTtlMs, long expiryGraceMs,
        long moveTimeoutMs, long leaderGraceMs, int drainBatch, long rebalanceIntervalMs, RebalancePlanner.Settings planner,
        SlotWeight.Coefficients weights, int totalSlots) {
      this(tickMs, heartbeatMs, suspectMs, deadMs, warmupMs, quarantineMs, leaseTtlMs, expiryGraceMs, moveTimeoutMs, leaderGraceMs, drainBatch,
          rebalanceIntervalMs, planner, weights, totalSlots, ScaleOutPlanner.Settings.defaults(), rebalanceIntervalMs);
    }
  }

  private final Vertx vertx;
  /** Every round runs on this context: kicks from the HTTP API or Redis hop here first. */
  private final Context context;
  private final ControlStore store;
  private final Leadership leadership;
  private final Consumer<String> announce;
  private final Metrics metrics;
  private final Clock clock;
  private final Settings settings;
  /** Closes a deposed worker's AMQP connections, so single-active-consumer hands its queues on at once. */
  private final BrokerFence fence;
  /** Waits on every live worker's liveness lock in PostgreSQL and kicks a round when one comes free. */
  private final LivenessWatch watch;
  private final Map<Integer, Long> lastSlotMove = new HashMap<>();
  private final Map<String, Long> lastSourceMove = new HashMap<>();
  /** Lease rows read by the last round: a reshard adds slots beyond slots.total before its effective time, and a shrink retires some. */
  private int slotCount;
  /** The last wave sent to each worker (cold start, scale-out), settled every round. */
  private Map<String, ScaleOutPlanner.Wave> waves = new HashMap<>();
  private Map<Integer, Long> devices = Map.of();
  private Map<Integer, Long> critical = Map.of();
  private long weightsReadAt;
  /** The slot count the last device count was read under: a reshard changes every slot's devices. */
  private int weightsReadFor;
  /** A reshard's switch moved devices to other slots ({@link #devicesMoved}) since the last count was read. */
  private boolean movedSinceRead;
  private Map<Integer, SlotFigures.Figures> figures = Map.of();
  private long electedAt;
  private long lastRebalance;
  private boolean rebalanceDue;
  private boolean busy;
  private boolean again;
  private long timer = -1;
  private volatile int activeWorkers;
  private volatile String lastPlan = "";
  private volatile QuietRead quiet = new QuietRead(Set.of(), 0);

  /** The quiet slots a round found ({@link SlotFigures#quiet}) and when. */
  private record QuietRead(Set<Integer> slots, long atMs) {}

  public ControlLoop(Vertx vertx, ControlStore store, Leadership leadership, Consumer<String> announce, Metrics metrics, Clock clock,
      Settings settings, BrokerFence fence, LivenessWatch watch) {
    this.fence = fence;
    this.watch = watch;
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

  /**
   * The slots whose owners said in their last heartbeats that nothing of them waits ready in the broker, as the last
   * round read them; none when this node does not lead or its last round is older than three ticks (at least 3 s).
   */
  public Set<Integer> quietSlots() {
    QuietRead q = quiet;
    return leadership.leading() && clock.millis() - q.atMs() <= 3 * Math.max(settings.tickMs(), 1000) ? q.slots() : Set.of();
  }

  public void elected() {
    if (elsewhere(this::elected)) return;
    electedAt = clock.millis();
    rebalanceDue = true;
    lastSlotMove.clear();
    lastSourceMove.clear();
    waves = new HashMap<>();
    weightsReadAt = 0;
    long window = Math.max(settings.planner().slotCooldownMs(), settings.planner().sourceCooldownMs());
    store.cooldowns(window, lastSlotMove, lastSourceMove).onFailure(e -> log.warn("cannot read recent moves for cooldowns: {}", e.getMessage()));
    if (timer < 0) timer = vertx.setPeriodic(settings.tickMs(), t -> kick());
    kick();
  }

  public void deposed() {
    if (elsewhere(this::deposed)) return;
    watch.release();
    if (timer >= 0) vertx.cancelTimer(timer);
    timer = -1;
  }

  /**
   * A reshard's {@code current_slot} switch finished ({@link SlotMaps}): the devices are in their new slots now, while the
   * count read when the lease rows' slot count changed saw them in the old ones; they are counted again ({@link #countDue}).
   */
  public void devicesMoved() {
    if (elsewhere(this::devicesMoved)) return;
    movedSinceRead = true;
  }

  /** Runs a round now (a notification arrived), or right after the one in progress. */
  public void kick() {
    if (elsewhere(this::kick)) return;
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

  /** True when called off the loop's context: {@code action} then runs there instead, later. */
  private boolean elsewhere(Runnable action) {
    if (Vertx.currentContext() == context) return false;
    context.runOnContext(v -> action.run());
    return true;
  }

  private boolean pastGrace() {
    return clock.millis() - electedAt >= settings.leaderGraceMs();
  }

  /** One round: read, plan, apply; true when it changed something. */
  private Future<Boolean> round() {
    return store.workers().compose(workers -> store.slots(settings.expiryGraceMs()).compose(slots -> {
      List<String> probe = new ArrayList<>();
      if (pastGrace()) for (WorkerRow w : workers) if (w.state().live() || w.state() == WorkerState.DEAD) probe.add(w.id());
      if (leadership.leading()) watch.follow(workers.stream().filter(w -> w.state().live()).map(WorkerRow::id).toList());
      else watch.release(); // deposed while this round read: no waits for a follower
      return store.crashed(probe).compose(crashed -> {
        long now = clock.millis();
        slotCount = 0;
        for (SlotRow r : slots) slotCount = Math.max(slotCount, r.slot() + 1);
        settleWaves(slots, now);
        figures = SlotFigures.fold(figures, slots, workers);
        quiet = new QuietRead(Set.copyOf(SlotFigures.quiet(slots, workers, 2 * settings.heartbeatMs() + settings.tickMs())), now);
        Snapshot snapshot = new Snapshot(workers, slots, crashed, now, pastGrace(), rebalanceDue || now - lastRebalance >= settings.rebalanceIntervalMs(),
            Collections.unmodifiableMap(lastSlotMove), Collections.unmodifiableMap(lastSourceMove), () -> weights(true),
            Collections.unmodifiableMap(waves), () -> weights(false));
        Decision decision = RoundPlanner.decide(snapshot, settings);
        if (!(decision instanceof WorkerChanges)) activeWorkers = RoundPlanner.placeable(workers, settings).size();
        return apply(decision, now, slots, workers);
      });
    }));
  }

  private Future<Boolean> apply(Decision decision, long now, List<SlotRow> slots, List<WorkerRow> workers) {
    long term = leadership.term();
    if (decision instanceof WorkerChanges w) return changeWorkers(w.changes(), term);
    if (decision instanceof Bumps b) return bump(b.bumps(), term, slots, workers).map(done -> {
      if (!b.waves().isEmpty()) {
        Map<String, List<Integer>> sent = new HashMap<>();
        for (Bump x : b.bumps()) if (done.contains(x.slot())) sent.computeIfAbsent(x.newOwner(), k -> new ArrayList<>()).add(x.slot());
        startWaves("cold start", b.waves(), sent, now);
      }
      return !done.isEmpty();
    });
    if (decision instanceof Moves m) {
      if (m.rebalance() != null) {
        rebalanced(m.rebalance(), now);
        log.info("rebalance: {}", m.rebalance().reason());
      }
      boolean cooled = m.rebalance() != null || !m.waves().isEmpty();
      return move(m.moves(), term, cooled).map(done -> {
        if (!m.waves().isEmpty()) {
          Map<String, List<Integer>> sent = new HashMap<>();
          for (SlotMove x : m.moves()) if (done.contains(x.row().slot())) sent.computeIfAbsent(x.target(), k -> new ArrayList<>()).add(x.row().slot());
          startWaves("scale-out", m.waves(), sent, now);
        }
        return !done.isEmpty();
      });
    }
    Plan considered = ((Nothing) decision).rebalance();
    if (considered != null) rebalanced(considered, now);
    return Future.succeededFuture(false);
  }

  /** Books the waves just sent (only slots whose write succeeded). */
  private void startWaves(String kind, Map<String, Integer> sizes, Map<String, List<Integer>> sent, long now) {
    for (Map.Entry<String, List<Integer>> e : sent.entrySet()) {
      int size = sizes.getOrDefault(e.getKey(), e.getValue().size());
      waves.put(e.getKey(), new ScaleOutPlanner.Wave(e.getKey(), Set.copyOf(e.getValue()), size, now, -1));
      log.info("{} wave to {}: {} slot(s) (wave size {})", kind, e.getKey(), e.getValue().size(), size);
    }
  }

  /** Marks the waves whose slots have all arrived as finished, and logs how long each took. */
  private void settleWaves(List<SlotRow> slots, long now) {
    Map<String, ScaleOutPlanner.Wave> settled = ScaleOutPlanner.settle(waves, slots, now);
    for (ScaleOutPlanner.Wave w : settled.values()) {
      ScaleOutPlanner.Wave before = waves.get(w.target());
      if (before != null && before.inFlight() && !w.inFlight()) {
        log.info("wave to {} arrived: {} slot(s) in {} ms", w.target(), w.slots().size(), w.durationMs());
        metrics.waveArrived(w.durationMs());
      }
    }
    waves = new HashMap<>(settled);
  }

  private void rebalanced(Plan plan, long now) {
    rebalanceDue = false;
    lastRebalance = now;
    lastPlan = plan.reason();
    log.debug("rebalance: {}", plan.reason());
  }

  private Future<Boolean> changeWorkers(List<WorkerChange> changes, long term) {
    return leadership.fenced(c -> ControlStore.applyWorkerChanges(c, changes, term)).map(done -> {
      for (WorkerChange ch : changes) {
        if (!done.contains(ch.worker())) continue;
        metrics.workerTransition(ch.from().name(), ch.to().name());
        log.info("worker {}: {} -> {} ({})", ch.worker(), ch.from(), ch.to(), ch.reason());
        if (ch.to() == WorkerState.DEAD) fence.closeWorker(ch.worker(), "declared DEAD: " + ch.reason());
        if (ch.to() == WorkerState.ACTIVE || ch.to() == WorkerState.DEAD || ch.to() == WorkerState.DRAINING) rebalanceDue = true;
      }
      return !done.isEmpty();
    });
  }

  private Future<Set<Integer>> bump(List<Bump> bumps, long term, List<SlotRow> slots, List<WorkerRow> workers) {
    return leadership.fenced(c -> ControlStore.applyBumps(c, bumps, term, settings.leaseTtlMs())).map(done -> {
      Map<Integer, String> owners = new HashMap<>();
      for (SlotRow r : slots) if (r.owner() != null) owners.put(r.slot(), r.owner());
      Map<String, List<Integer>> timedOut = new HashMap<>();
      for (Bump b : bumps) {
        if (!done.contains(b.slot())) continue;
        metrics.slotTransition(b.reason(), b.newState().name());
        // an old owner that did not release a MOVING slot in time may hang with its consumers active on the broker
        if (MOVE_TIMEOUT.equals(b.reason()) && owners.get(b.slot()) != null) timedOut.computeIfAbsent(owners.get(b.slot()), k -> new ArrayList<>()).add(b.slot());
      }
      // only an owner that also stopped heartbeating: closing a live but slow worker's connection restarts all its consumers
      // (seen in the failover drill on a loaded machine), while its epoch is fenced anyway
      Map<String, Long> heartbeatAge = new HashMap<>();
      for (WorkerRow w : workers) heartbeatAge.put(w.id(), w.heartbeatAgeMs());
      timedOut.forEach((w, s) -> {
        if (heartbeatAge.getOrDefault(w, Long.MAX_VALUE) > settings.suspectMs()) {
          fence.closeWorker(w, "did not release MOVING slot(s) " + s + " within scheduler.move.timeout.ms and heartbeats no more");
        }
      });
      if (!done.isEmpty()) {
        Map<String, Integer> byReason = new HashMap<>();
        for (Bump b : bumps) if (done.contains(b.slot())) byReason.merge(b.reason() + " -> " + b.newState(), 1, Integer::sum);
        log.info("leases: {}", byReason);
      }
      return done;
    });
  }

  private Future<Set<Integer>> move(List<SlotMove> moves, long term, boolean cooled) {
    return leadership.fenced(c -> ControlStore.applyMoves(c, moves, term)).map(done -> {
      long now = clock.millis();
      for (SlotMove m : moves) {
        SlotRow r = m.row();
        if (!done.contains(r.slot())) continue;
        metrics.slotTransition(m.reason(), SlotState.MOVING.name());
        if (cooled) {
          lastSlotMove.put(r.slot(), now);
          lastSourceMove.put(r.owner(), now);
        }
      }
      if (!done.isEmpty()) log.info("{}: {} slot(s) MOVING", moves.get(0).reason(), done.size());
      return done;
    });
  }

  /** The slots in the map: the lease rows the last round read (a reshard adds and retires them), slots.total before. */
  private int slots() {
    return slotCount > 0 ? slotCount : settings.totalSlots();
  }

  /**
   * Slot weights (seed 000 §4.3): device and critical-device counts from the database (read at the election,
   * every device count interval and after a change of the slot map), message rate, backlog and batch time from
   * what workers report with their heartbeats ({@code backlog_metrics.slots}, kept across moves by
   * {@link SlotFigures}). Without the measured
   * terms ({@code measured} false) for the scale-out ({@link SlotWeight#perSlot}): a batch's time and a slot's
   * mailbox are mostly the owner's own load, not the slot's work, so a planner evening them out chases its own
   * moves — the slots a loaded worker gives away get faster, and it looks heavier still. When the counts are read:
   * {@link #countDue}.
   */
  private Map<Integer, Double> weights(boolean measured) {
    long now = clock.millis();
    if (countDue(now, weightsReadAt, movedSinceRead || weightsReadFor != slots(), settings.deviceCountIntervalMs(), settings.rebalanceIntervalMs())) {
      String reason = weightsReadAt == 0 ? "election" : movedSinceRead ? "switch" : weightsReadFor != slots() ? "slots" : "interval";
      Counter.builder("scheduler_device_counts_total").tag("reason", reason)
          .description("the leader's counts of each slot's devices (a scan of device_status_current), by why it ran").register(metrics.registry()).increment();
      weightsReadAt = now;
      weightsReadFor = slots();
      movedSinceRead = false;
      store.devicesPerSlot().onSuccess(d -> devices = d);
      store.criticalDevices().onSuccess(ids -> {
        Map<Integer, Long> c = new HashMap<>();
        for (String id : ids) c.merge(SlotHash.slotOf(id, slots()), 1L, Long::sum);
        critical = c;
      });
    }
    return SlotWeight.perSlot(settings.weights(), slots(), devices, critical, figures, measured);
  }

  /**
   * Whether the devices of each slot are counted again at {@code now}: never read since the election ({@code readAt} 0), read
   * {@code intervalMs} ago, or the slot map changed since the read ({@code mapChanged}: another slot count in the lease rows, or
   * a reshard's switch moved devices) at least {@code minIntervalMs} ago (the rebalance interval: however often the map changes,
   * the scan runs no more often than it did when every rebalance read it). The count scans device_status_current, so it is not
   * read every rebalance interval: a device count changes with the inventory and reshards, not from one minute to the next.
   */
  static boolean countDue(long now, long readAt, boolean mapChanged, long intervalMs, long minIntervalMs) {
    if (readAt == 0) return true;
    long age = now - readAt;
    return age >= intervalMs || mapChanged && age >= minIntervalMs;
  }
}
