package dev.inspection.worker;

import dev.inspection.common.Retry;
import dev.inspection.common.RetryPolicy;
import dev.inspection.control.WorkerState;
import dev.inspection.worker.LeaseReconciler.Lease;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's side of the control plane, and its own life cycle. The leader decides who owns what; this
 * class follows:
 * <ul>
 *   <li><b>Liveness</b> ({@link LivenessSession}): a crash is known in about a second; heartbeats remain
 *       the signal for a hung process. Holding the lock comes first, then registration.</li>
 *   <li><b>Heartbeat</b> every {@code heartbeatMs}: reports backlog figures and reads this worker's state;
 *       DEAD or QUARANTINE stops all consumption at once; OFFLINE after a drain makes the worker exit.
 *       Every heartbeat that {@link Settings#renewDue} picks (about every third of the lease TTL) also renews
 *       the leases, locking their rows {@code FOR NO KEY UPDATE} (no lock that a batch's {@code FOR KEY SHARE} conflicts
 *       with, so it never waits on in-flight batches), one renewal at a time; and one heartbeat at a time.</li>
 *   <li><b>Leases</b> are read every {@code pollMs} and whenever Redis announces a change (INV-14: Redis
 *       only accelerates); {@link LeaseReconciler} decides, {@link HeldSlots} acts.</li>
 *   <li><b>Stop</b> (D6): DRAINING, the leader moves the slots out, the rest is released here, OFFLINE.</li>
 * </ul>
 */
public final class LeaseKeeper {
  private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

  /** Tunables. */
  public record Settings(long leaseTtlMs, long heartbeatMs, long pollMs, long freezeHeartbeatAfterMs, RetryPolicy retry) {
    /**
     * Whether this heartbeat renews the leases, {@code sinceLastMs} after the last renewal that worked (negative:
     * none yet): when waiting for the next heartbeat would let more than a third of the lease TTL pass. At the
     * defaults (TTL 30 s, heartbeat 3 s) every third heartbeat renews, so a lease always has at least 20 s left
     * plus the leader's expiry grace; the lease rows are written a third as often on an idle node (issue 11).
     * The heartbeat row itself (liveness, DEAD/QUARANTINE) is still written every time.
     */
    public boolean renewDue(long sinceLastMs) {
      return sinceLastMs < 0 || sinceLastMs + heartbeatMs > leaseTtlMs / 3;
    }
  }

  private final Vertx vertx;
  private final Context context;
  private final Clock clock;
  private final LeaseStore store;
  private final LivenessSession liveness;
  private final Settings settings;
  private final Supplier<JsonObject> backlog;
  private final Runnable drained;
  private final Retry retry;
  private final HeldSlots slots;
  private final String workerId;
  private Runnable announce = () -> { };
  private boolean registered;
  private boolean registering;
  private volatile WorkerState state = WorkerState.REGISTERED;
  private long lastLeaseRead;
  /** When (clock) the leases were last renewed; -1 before the first renewal. */
  private long lastRenewed = -1;
  /**
   * A renewal is under way: a heartbeat issues no second one. One that waits (behind a leader's transaction that holds a
   * lease row: a bump or a switch between its lock and its commit, or one that stopped halfway) holds one connection of the
   * control pool; a renewal at every heartbeat took all three, and the heartbeats timed out waiting for a connection.
   */
  private boolean renewing;
  /**
   * A heartbeat is under way: the next ones are skipped until it answers (the liveness ping still goes). One that waits
   * (the worker's own row held {@code FOR UPDATE} by a leader's transaction that stopped halfway) holds one connection of
   * the control pool; one every {@code heartbeatMs} took all three, and the lease reads timed out waiting for one.
   */
  private boolean beating;
  private long skippedBeats;
  private long startedAt;
  private boolean stopping;
  private boolean polling;
  private boolean pollAgain;
  private volatile boolean frozen;
  private long heartbeatTimer = -1;
  private long pollTimer = -1;

  LeaseKeeper(Vertx vertx, Clock clock, LeaseStore store, LivenessSession liveness, Settings settings, HeldSlots.Listener listener,
      Supplier<JsonObject> backlog, Runnable drained) {
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
    this.clock = clock;
    this.store = store;
    this.liveness = liveness;
    this.settings = settings;
    this.backlog = backlog;
    this.drained = drained;
    this.retry = new Retry(vertx, settings.retry(), log);
    this.slots = new HeldSlots(vertx, clock, store, listener, () -> announce.run());
    this.workerId = store.workerId();
  }

  /** Called after this worker changed a lease or its own state (to tell the leader through Redis). */
  public void onChange(Runnable r) {
    this.announce = r;
  }

  public WorkerState state() {
    return state;
  }

  /** Slots consumed (or being loaded or released) at their epochs. */
  public Map<Integer, Long> held() {
    return slots.epochs();
  }

  public int heldCount() {
    return slots.count();
  }

  /** Age of the newest lease read from the database (INV-15); -1 before the first. */
  public long leaseCacheAgeMs() {
    return lastLeaseRead == 0 ? -1 : clock.millis() - lastLeaseRead;
  }

  /** In-process fault switch (seed 000 scenario E): heartbeats and lease reads stop, consumption goes on. */
  public void freezeHeartbeat() {
    frozen = true;
    log.warn("FAULT: worker {} heartbeat frozen (it keeps consuming)", workerId);
  }

  public Future<Void> start() {
    startedAt = clock.millis();
    heartbeatTimer = vertx.setPeriodic(settings.heartbeatMs(), t -> heartbeat());
    pollTimer = vertx.setPeriodic(settings.pollMs(), t -> poll());
    liveness.start(() -> stopping, () -> {
      if (!registered) register();
    });
    return Future.succeededFuture();
  }

  private boolean frozenNow() {
    if (!frozen && settings.freezeHeartbeatAfterMs() > 0 && clock.millis() - startedAt > settings.freezeHeartbeatAfterMs()) {
      freezeHeartbeat();
    }
    return frozen;
  }

  private void register() {
    if (stopping || registering) return;
    registering = true;
    JsonObject meta = new JsonObject().put("pid", ProcessHandle.current().pid()).put("started", clock.millis());
    retry.until("register worker " + workerId, () -> store.register(meta), e -> false, () -> stopping).onComplete(ar -> {
      registering = false;
      if (ar.failed()) return; // stopping
      registered = true;
      state = WorkerState.REGISTERED;
      log.info("worker {} registered (liveness lock held); waiting for the leader to make it ACTIVE", workerId);
      announce.run();
    });
  }

  private void heartbeat() {
    if (!registered || frozenNow()) return;
    liveness.ping();
    if (beating) {
      if (skippedBeats++ == 0) log.warn("worker {}: the last heartbeat has not answered in {} ms; no other is issued until it does", workerId, settings.heartbeatMs());
      return;
    }
    beating = true;
    store.heartbeat(backlog.get()).onComplete(ar -> {
      beating = false;
      if (skippedBeats > 0) log.info("worker {}: the heartbeat that waited has answered; {} skipped meanwhile", workerId, skippedBeats);
      skippedBeats = 0;
    }).compose(read -> {
      if (read.isEmpty()) {
        registered = false;
        register();
        return Future.succeededFuture();
      }
      if (followOwnState(read.get())) return Future.succeededFuture();
      long now = clock.millis();
      // the lease poll (every pollMs, and on every Redis notice) reads the leases in between
      if (renewing || !settings.renewDue(lastRenewed < 0 ? -1 : now - lastRenewed)) return Future.succeededFuture();
      long issued = slots.newRead();
      renewing = true;
      return store.renew(settings.leaseTtlMs()).map(leases -> {
        lastRenewed = now;
        reconcile(leases, issued);
        return null;
      }).onComplete(ar -> renewing = false);
    }).onFailure(e -> {
      log.warn("heartbeat failed ({})", e.getMessage());
      overdue();
    });
  }

  /**
   * Takes the state the database holds for this worker; true when it may no longer follow its leases:
   * DEAD or QUARANTINE stop every slot at once, OFFLINE after a drain (not a stop of its own) makes it leave.
   */
  private boolean followOwnState(WorkerState now) {
    if (now != state) log.info("worker {} reads its state {}", workerId, now);
    state = now;
    if (now == WorkerState.DEAD || now == WorkerState.QUARANTINE) {
      if (slots.count() > 0) log.warn("worker {} reads its own state {}: stopping all consumption", workerId, now);
      slots.dropAll();
      return true;
    }
    if (now == WorkerState.OFFLINE && !stopping) {
      slots.dropAll();
      log.info("worker {} is OFFLINE (drained): leaving", workerId);
      drained.run();
      return true;
    }
    return false;
  }

  /** INV-15: knowledge of our leases older than a lease means they may have moved: stop rather than guess. */
  private void overdue() {
    if (lastLeaseRead > 0 && clock.millis() - lastLeaseRead > settings.leaseTtlMs() && slots.count() > 0) {
      log.warn("no lease read for over {} ms: releasing every slot locally", settings.leaseTtlMs());
      slots.dropAll();
    }
  }

  /** Reads this worker's leases now (a notification arrived, or the poll timer fired). */
  public void poll() {
    if (!registered || frozen) return;
    if (polling) {
      pollAgain = true;
      return;
    }
    polling = true;
    pollAgain = false;
    long issued = slots.newRead();
    store.myLeases().onComplete(ar -> {
      polling = false;
      if (ar.succeeded()) {
        WorkerState mine = ar.result().worker();
        if (mine != null && mine != state) followOwnState(mine);
        reconcile(ar.result().leases(), issued);
      } else {
        overdue();
      }
      if (pollAgain) vertx.runOnContext(v -> poll());
    });
  }

  private void reconcile(List<Lease> leases, long issued) {
    lastLeaseRead = clock.millis();
    if (frozen) return;
    slots.reconcile(leases, issued, state, stopping);
  }

  /** A batch found the lease gone: forget the slot now, without waiting for the next read (from any thread: it hops to this worker's context). */
  public void forget(int slot, long epoch) {
    if (Vertx.currentContext() != context) {
      context.runOnContext(v -> forget(slot, epoch));
      return;
    }
    slots.forget(slot, epoch);
  }

  // ---- graceful stop (D6)

  /**
   * SIGTERM: this worker is DRAINING; the leader moves its slots out (this class keeps following).
   * Completes with whether another ACTIVE worker exists to take them (if not, waiting is pointless).
   */
  public Future<Boolean> beginDrain() {
    stopping = true;
    return selfState(WorkerState.DRAINING, "SIGTERM: graceful stop", LeaseStore.DRAIN_FROM)
        .compose(v -> store.othersActive())
        .recover(e -> Future.succeededFuture(false));
  }

  /** Whatever the leader did not move in time: release it here (commit, ack, DRAINING_OLD) within the deadline (epoch ms of the clock). */
  public Future<Void> releaseRemaining(long deadlineMs) {
    return slots.releaseRemaining(deadlineMs);
  }

  /** Completes when every held slot is gone, or when nothing moved for {@code stallMs} (no leader?), or at the deadline. */
  public Future<Void> awaitHandover(long deadlineMs, long stallMs) {
    return slots.awaitHandover(deadlineMs, stallMs);
  }

  /** Last step of a stop: OFFLINE, then the liveness session closes (an OFFLINE worker is not declared dead). */
  public Future<Void> offline() {
    stopping = true;
    vertx.cancelTimer(heartbeatTimer);
    vertx.cancelTimer(pollTimer);
    return selfState(WorkerState.OFFLINE, "stopped", LeaseStore.OFFLINE_FROM).<Void>mapEmpty().eventually(liveness::close);
  }

  private Future<Boolean> selfState(WorkerState to, String why, Set<WorkerState> from) {
    return store.selfState(to, from, why).map(Optional::isPresent).onSuccess(done -> {
      if (done) {
        state = to;
        announce.run();
      }
    }).recover(e -> {
      log.warn("worker {}: cannot record state {} ({})", workerId, to, e.getMessage());
      return Future.succeededFuture(false);
    });
  }
}
