package dev.inspection.worker;

import dev.inspection.common.Backoff;
import dev.inspection.control.Liveness;
import dev.inspection.control.SlotState;
import dev.inspection.control.WorkerState;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's side of the control plane. The leader decides who owns what; this class follows:
 * <ul>
 *   <li><b>Liveness</b>: an advisory lock held by a dedicated database session of this process. When the
 *       process dies the session ends and the leader can take the lock: a crash is known in about a
 *       second, without waiting for heartbeats. Heartbeats remain the signal for a hung process.</li>
 *   <li><b>Heartbeat</b> every {@code heartbeatMs}: reports backlog figures and reads this worker's state;
 *       DEAD or QUARANTINE stops all consumption at once; OFFLINE after a drain makes the worker exit.
 *       The same round renews the leases with a plain UPDATE (no lock that a batch holds, so it never
 *       waits on in-flight batches).</li>
 *   <li><b>Leases</b> are read from the database every {@code pollMs} and whenever Redis announces a
 *       change (INV-14: Redis only accelerates). For each slot: LOADING_NEW → load the slot's derived
 *       state (INV-10), mark ACTIVE, consume; MOVING → stop consuming, commit and ack what is held,
 *       mark DRAINING_OLD (seed 000 §4.3 executeMigration); gone or a new epoch → stop at once.</li>
 * </ul>
 * The worker itself never changes an owner or an epoch: only the leader does.
 */
public final class LeaseKeeper {
  private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

  static final String TRY_LIVENESS = "SELECT pg_try_advisory_lock(hashtext($1), hashtext($2))";
  static final String PREVIOUS = "SELECT state FROM worker_heartbeat WHERE worker_id = $1";
  static final String REGISTER = """
      INSERT INTO worker_heartbeat (worker_id, state, last_heartbeat, started_at, state_since, metadata)
      VALUES ($1, 'REGISTERED', now(), now(), now(), $2::jsonb)
      ON CONFLICT (worker_id) DO UPDATE SET state = 'REGISTERED', last_heartbeat = now(), started_at = now(), state_since = now(),
        metadata = EXCLUDED.metadata""";
  static final String HISTORY = "INSERT INTO worker_state_history (worker_id, old_state, new_state, reason) VALUES ($1, $2, $3, $4)";
  /** A new process holds nothing: whatever an earlier incarnation held is handed back (no owner/epoch change). */
  static final String RELEASE_LEFTOVERS = """
      UPDATE slot_lease SET state = 'DRAINING_OLD', state_since = now(), updated_at = now()
      WHERE owner_worker_id = $1 AND state IN ('ACTIVE', 'MOVING', 'LOADING_NEW')""";
  static final String HEARTBEAT = "UPDATE worker_heartbeat SET last_heartbeat = now(), backlog_metrics = $2::jsonb WHERE worker_id = $1 RETURNING state";
  static final String RENEW = """
      UPDATE slot_lease SET lease_until = now() + $2::bigint * interval '1 millisecond', last_renewed_at = now()
      WHERE owner_worker_id = $1 AND state IN ('ACTIVE', 'MOVING', 'LOADING_NEW') RETURNING slot_id, lease_epoch, state""";
  static final String MY_LEASES = """
      SELECT w.state, s.slot_id, s.lease_epoch, s.state FROM worker_heartbeat w
      LEFT JOIN slot_lease s ON s.owner_worker_id = w.worker_id WHERE w.worker_id = $1""";

  record Lease(int slot, long epoch, SlotState state) {}
  /** The new owner's last step of a move (history rows make per-slot handover times measurable). */
  static final String ACTIVATE = """
      WITH upd AS (
        UPDATE slot_lease SET state = 'ACTIVE', state_since = now(), updated_at = now()
        WHERE slot_id = $1 AND owner_worker_id = $2 AND lease_epoch = $3 AND state = 'LOADING_NEW' RETURNING slot_id)
      INSERT INTO slot_lease_history (slot_id, old_owner, new_owner, old_epoch, new_epoch, reason, old_state, new_state)
      SELECT slot_id, $2, $2, $3, $3, $4, 'LOADING_NEW', 'ACTIVE' FROM upd""";
  static final String RELEASED = """
      WITH old AS (SELECT slot_id, state FROM slot_lease
                   WHERE slot_id = $1 AND owner_worker_id = $2 AND lease_epoch = $3 AND state IN ('ACTIVE', 'MOVING', 'LOADING_NEW')),
      upd AS (
        UPDATE slot_lease s SET state = 'DRAINING_OLD', state_since = now(), updated_at = now()
        FROM old WHERE s.slot_id = old.slot_id AND s.lease_epoch = $3 AND s.state = old.state RETURNING s.slot_id, old.state)
      INSERT INTO slot_lease_history (slot_id, old_owner, new_owner, old_epoch, new_epoch, reason, old_state, new_state)
      SELECT slot_id, $2, $2, $3, $3, 'released', state, 'DRAINING_OLD' FROM upd""";
  static final String SELF_STATE = """
      UPDATE worker_heartbeat SET state = $2, state_since = now() WHERE worker_id = $1 AND state = ANY($3::varchar[]) RETURNING worker_id""";

  /** What the worker does when its holdings change. */
  public interface Listener {
    /** INV-10: load the derived state of the slot's devices; completes when the slot may consume. */
    Future<Void> load(int slot, long epoch);

    void consume(int slot, long epoch);

    /** Graceful: stop consuming, commit and ack what is held, close the channels. */
    Future<Void> release(int slot, long epoch);

    /** Immediate: the lease is gone; everything unacked goes back to the queue. */
    void lost(int slot, long epoch);
  }

  /** Tunables. */
  public record Settings(long leaseTtlMs, long heartbeatMs, long pollMs, long freezeHeartbeatAfterMs) {}

  enum Phase { LOADING, CONSUMING, RELEASING }

  private static final class Held {
    final long epoch;
    Phase phase;

    Held(long epoch, Phase phase) {
      this.epoch = epoch;
      this.phase = phase;
    }
  }

  private final Vertx vertx;
  private final Pool pool;
  private final PgConnectOptions livenessOptions;
  private final String livenessNamespace;
  private final String workerId;
  private final Settings settings;
  private final Listener listener;
  private final Supplier<JsonObject> backlog;
  private final Backoff backoff;
  private final Runnable drained;
  private final Map<Integer, Held> held = new HashMap<>();
  /**
   * Reads and local changes are numbered: a read answered after a local change of a slot, but sent
   * before it, says nothing about that slot any more (a late heartbeat renewal must not stop a slot
   * this worker has just started loading, nor restart one it has just released).
   */
  private long seq;
  private final Map<Integer, Long> touched = new HashMap<>();
  private Runnable announce = () -> { };
  private PgConnection liveness;
  private boolean registered;
  private volatile WorkerState state = WorkerState.REGISTERED;
  private long lastLeaseRead;
  private long startedAt;
  private boolean stopping;
  private boolean polling;
  private boolean pollAgain;
  private volatile boolean frozen;
  private long heartbeatTimer = -1;
  private long pollTimer = -1;
  private long livenessSince;

  public LeaseKeeper(Vertx vertx, Pool pool, PgConnectOptions connectOptions, String schema, String workerId, Settings settings,
      Listener listener, Supplier<JsonObject> backlog, Backoff backoff, Runnable drained) {
    this.vertx = vertx;
    this.pool = pool;
    java.util.Map<String, String> props = new HashMap<>(connectOptions.getProperties());
    props.put("application_name", "inspection-worker-liveness");
    this.livenessOptions = new PgConnectOptions(connectOptions).setProperties(props);
    this.livenessNamespace = Liveness.namespace(schema);
    this.workerId = workerId;
    this.settings = settings;
    this.listener = listener;
    this.backlog = backlog;
    this.backoff = backoff;
    this.drained = drained;
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
    Map<Integer, Long> out = new HashMap<>();
    held.forEach((s, h) -> out.put(s, h.epoch));
    return out;
  }

  public int heldCount() {
    return held.size();
  }

  /** Age of the newest lease read from the database (INV-15); -1 before the first. */
  public long leaseCacheAgeMs() {
    return lastLeaseRead == 0 ? -1 : System.currentTimeMillis() - lastLeaseRead;
  }

  /** In-process fault switch (seed 000 scenario E): heartbeats and lease reads stop, consumption goes on. */
  public void freezeHeartbeat() {
    frozen = true;
    log.warn("FAULT: worker {} heartbeat frozen (it keeps consuming)", workerId);
  }

  public Future<Void> start() {
    startedAt = System.currentTimeMillis();
    heartbeatTimer = vertx.setPeriodic(settings.heartbeatMs(), t -> heartbeat());
    pollTimer = vertx.setPeriodic(settings.pollMs(), t -> poll());
    connectLiveness();
    return Future.succeededFuture();
  }

  private boolean frozenNow() {
    if (!frozen && settings.freezeHeartbeatAfterMs() > 0 && System.currentTimeMillis() - startedAt > settings.freezeHeartbeatAfterMs()) {
      freezeHeartbeat();
    }
    return frozen;
  }

  // ---- liveness and registration

  private void connectLiveness() {
    if (stopping || liveness != null) return;
    PgConnection.connect(vertx, livenessOptions).compose(c -> c.preparedQuery(TRY_LIVENESS).execute(Tuple.of(livenessNamespace, workerId))
        .compose(rows -> {
          if (!rows.iterator().next().getBoolean(0)) {
            c.close();
            return Future.failedFuture(new IllegalStateException("the liveness lock of worker '" + workerId
                + "' is held by another session: another process with the same node.id is running (give each worker its own node.id),"
                + " or the leader is checking it right now"));
          }
          return Future.succeededFuture(c);
        })).onSuccess(c -> {
          if (stopping) {
            c.close();
            return;
          }
          liveness = c;
          livenessSince = System.currentTimeMillis();
          backoff.reset();
          c.closeHandler(v -> {
            if (liveness == c) {
              liveness = null;
              if (!stopping) {
                log.warn("worker {}: liveness session lost; taking the lock again (the leader may declare this worker dead meanwhile)", workerId);
                vertx.setTimer(backoff.next(), t -> connectLiveness());
              }
            }
          });
          if (!registered) register();
        }).onFailure(e -> {
          long d = backoff.next();
          if (backoff.attempts() % 10 == 1 || !(e instanceof IllegalStateException)) {
            log.warn("worker {}: cannot hold the liveness lock yet ({}); retrying in {} ms", workerId, e.getMessage(), d);
          }
          vertx.setTimer(d, t -> connectLiveness());
        });
  }

  private void register() {
    if (stopping) return;
    JsonObject meta = new JsonObject().put("pid", ProcessHandle.current().pid()).put("started", System.currentTimeMillis());
    pool.withTransaction(c -> c.preparedQuery(PREVIOUS).execute(Tuple.of(workerId)).compose(prev -> {
      String before = prev.size() == 0 ? null : prev.iterator().next().getString(0);
      Future<?> f = Future.succeededFuture();
      if (before != null && !WorkerState.parse(before).canMoveTo(WorkerState.REGISTERED)) {
        // the previous incarnation of this id ended without saying so: record it as dead, then the restart
        f = c.preparedQuery(HISTORY).execute(Tuple.of(workerId, before, "DEAD", "process restarted"));
        before = "DEAD";
      }
      String from = before;
      return f.compose(v -> c.preparedQuery(REGISTER).execute(Tuple.of(workerId, meta)))
          .compose(v -> c.preparedQuery(HISTORY).execute(Tuple.of(workerId, from, "REGISTERED", "process started")))
          .compose(v -> c.preparedQuery(RELEASE_LEFTOVERS).execute(Tuple.of(workerId)));
    })).onSuccess(r -> {
      registered = true;
      state = WorkerState.REGISTERED;
      log.info("worker {} registered (liveness lock held); waiting for the leader to make it ACTIVE", workerId);
      announce.run();
    }).onFailure(e -> {
      log.warn("worker {}: cannot register yet ({}); retrying", workerId, e.getMessage());
      vertx.setTimer(backoff.next(), t -> register());
    });
  }

  // ---- heartbeat

  private void heartbeat() {
    if (!registered || frozenNow()) return;
    if (liveness != null) liveness.query("SELECT 1").execute(); // a dead session shows up as a close
    pool.preparedQuery(HEARTBEAT).execute(Tuple.of(workerId, backlog.get())).compose(rows -> {
      if (rows.size() == 0) {
        registered = false;
        register();
        return Future.succeededFuture();
      }
      WorkerState now = WorkerState.parse(rows.iterator().next().getString(0));
      if (now != state) log.info("worker {} reads its state {}", workerId, now);
      state = now;
      if (now == WorkerState.DEAD || now == WorkerState.QUARANTINE) {
        if (!held.isEmpty()) log.warn("worker {} reads its own state {}: stopping all consumption", workerId, now);
        dropAll("state " + now);
        return Future.succeededFuture();
      }
      if (now == WorkerState.OFFLINE && !stopping) {
        dropAll("state OFFLINE");
        log.info("worker {} is OFFLINE (drained): leaving", workerId);
        drained.run();
        return Future.succeededFuture();
      }
      long issued = ++seq;
      return pool.preparedQuery(RENEW).execute(Tuple.of(workerId, settings.leaseTtlMs())).map(r -> {
        List<Lease> leases = new ArrayList<>();
        for (Row row : r) leases.add(new Lease(row.getShort(0), row.getLong(1), SlotState.parse(row.getString(2))));
        reconcile(leases, issued);
        return null;
      });
    }).onFailure(e -> {
      log.warn("heartbeat failed ({})", e.getMessage());
      overdue();
    });
  }

  /** INV-15: knowledge of our leases older than a lease means they may have moved: stop rather than guess. */
  private void overdue() {
    if (lastLeaseRead > 0 && System.currentTimeMillis() - lastLeaseRead > settings.leaseTtlMs() && !held.isEmpty()) {
      log.warn("no lease read for over {} ms: releasing every slot locally", settings.leaseTtlMs());
      dropAll("lease knowledge too old");
    }
  }

  // ---- leases

  /** Reads this worker's leases now (a notification arrived, or the poll timer fired). */
  public void poll() {
    if (!registered || frozen) return;
    if (polling) {
      pollAgain = true;
      return;
    }
    polling = true;
    pollAgain = false;
    long issued = ++seq;
    pool.preparedQuery(MY_LEASES).execute(Tuple.of(workerId)).onComplete(ar -> {
      polling = false;
      if (ar.succeeded()) {
        List<Lease> leases = new ArrayList<>();
        WorkerState mine = null;
        for (Row row : ar.result()) {
          mine = WorkerState.parse(row.getString(0));
          if (row.getValue(1) != null) leases.add(new Lease(row.getShort(1), row.getLong(2), SlotState.parse(row.getString(3))));
        }
        if (mine != null && mine != state) {
          log.info("worker {} reads its state {}", workerId, mine);
          state = mine;
          if (mine == WorkerState.DEAD || mine == WorkerState.QUARANTINE) dropAll("state " + mine);
          if (mine == WorkerState.OFFLINE && !stopping) {
            dropAll("state OFFLINE");
            log.info("worker {} is OFFLINE (drained): leaving", workerId);
            drained.run();
          }
        }
        reconcile(leases, issued);
      } else {
        overdue();
      }
      if (pollAgain) vertx.runOnContext(v -> poll());
    });
  }

  private void touch(int slot) {
    touched.put(slot, ++seq);
  }

  private boolean stale(int slot, long issued) {
    return touched.getOrDefault(slot, 0L) > issued;
  }

  private void reconcile(List<Lease> rows, long issued) {
    lastLeaseRead = System.currentTimeMillis();
    if (frozen) return;
    Map<Integer, Lease> now = new HashMap<>();
    for (Lease r : rows) if (!stale(r.slot(), issued)) now.put(r.slot(), r);
    boolean mayConsume = state.consumes() || stopping;
    for (Map.Entry<Integer, Held> e : new ArrayList<>(held.entrySet())) {
      int slot = e.getKey();
      Held h = e.getValue();
      if (stale(slot, issued)) continue;
      Lease row = now.get(slot);
      boolean gone = row == null || row.epoch() != h.epoch || (row.state() == SlotState.DRAINING_OLD && h.phase != Phase.RELEASING);
      if (gone || !mayConsume) drop(slot, h);
    }
    if (!mayConsume) return;
    for (Lease row : now.values()) {
      int slot = row.slot();
      long epoch = row.epoch();
      Held h = held.get(slot);
      switch (row.state()) {
        case LOADING_NEW -> {
          if (h == null && !stopping) load(slot, epoch);
          else if (h == null) released(slot, epoch); // stopping: hand it straight back
        }
        case ACTIVE -> {
          if (h == null) {
            held.put(slot, new Held(epoch, Phase.CONSUMING));
            touch(slot);
            listener.consume(slot, epoch);
          }
        }
        case MOVING -> {
          if (h == null) {
            released(slot, epoch);
          } else if (h.phase == Phase.CONSUMING) {
            release(slot, h);
          }
        }
        default -> { }
      }
    }
  }

  private void load(int slot, long epoch) {
    Held h = new Held(epoch, Phase.LOADING);
    held.put(slot, h);
    touch(slot);
    long start = System.nanoTime();
    listener.load(slot, epoch)
        .compose(v -> held.get(slot) == h ? pool.preparedQuery(ACTIVATE).execute(Tuple.of(slot, workerId, epoch,
            "loaded in " + (System.nanoTime() - start) / 1_000_000 + " ms")).map(r -> r.rowCount() == 1)
            : Future.succeededFuture(false))
        .onComplete(ar -> {
          if (held.get(slot) != h) return; // lost meanwhile
          if (ar.succeeded() && ar.result()) {
            h.phase = Phase.CONSUMING;
            touch(slot);
            listener.consume(slot, epoch);
            announce.run();
          } else {
            // the lease moved while loading, or the database failed: forget it; the next read decides again
            drop(slot, h);
            if (ar.failed()) log.warn("slot {}: cannot load its derived state ({}); will retry", slot, ar.cause().getMessage());
          }
        });
  }

  /** Graceful: the slot stops, commits and acks what it holds, then is marked DRAINING_OLD. */
  private Future<Void> release(int slot, Held h) {
    h.phase = Phase.RELEASING;
    touch(slot);
    return listener.release(slot, h.epoch).eventually(() -> {
      if (held.get(slot) == h) held.remove(slot);
      touch(slot);
      return released(slot, h.epoch);
    });
  }

  /** The old owner's half of a move: everything it held is committed and acked; the leader may hand the slot on. */
  private Future<Void> released(int slot, long epoch) {
    return pool.preparedQuery(RELEASED).execute(Tuple.of(slot, workerId, epoch)).map(r -> {
      if (r.rowCount() == 1) announce.run();
      return (Void) null;
    }).onFailure(e -> log.warn("slot {}: cannot mark it released ({}); the leader will fence it after its move timeout", slot, e.getMessage()));
  }

  /** A batch found the lease gone: forget the slot now, without waiting for the next read. */
  public void forget(int slot, long epoch) {
    Held h = held.get(slot);
    if (h != null && h.epoch == epoch) drop(slot, h);
  }

  /** Stops a slot at once (everything unacked goes back to the queue) and remembers the change. */
  private void drop(int slot, Held h) {
    held.remove(slot);
    touch(slot);
    listener.lost(slot, h.epoch);
  }

  private void dropAll(String why) {
    for (Map.Entry<Integer, Held> e : new ArrayList<>(held.entrySet())) drop(e.getKey(), e.getValue());
  }

  // ---- graceful stop (D6)

  static final String OTHERS_ACTIVE = "SELECT count(*) FROM worker_heartbeat WHERE state = 'ACTIVE' AND worker_id <> $1";

  /**
   * SIGTERM: this worker is DRAINING; the leader moves its slots out (this class keeps following).
   * Completes with whether another ACTIVE worker exists to take them (if not, waiting is pointless).
   */
  public Future<Boolean> beginDrain() {
    stopping = true;
    return selfState(WorkerState.DRAINING, "SIGTERM: graceful stop",
        WorkerState.REGISTERED, WorkerState.WARMING, WorkerState.ACTIVE, WorkerState.SUSPECTED, WorkerState.QUARANTINE)
        .compose(v -> pool.preparedQuery(OTHERS_ACTIVE).execute(Tuple.of(workerId)).map(r -> r.iterator().next().getLong(0) > 0))
        .recover(e -> Future.succeededFuture(false));
  }

  /** Whatever the leader did not move in time: release it here (commit, ack, DRAINING_OLD) within the deadline. */
  public Future<Void> releaseRemaining(long deadlineMs) {
    List<Future<Void>> all = new ArrayList<>();
    for (Map.Entry<Integer, Held> e : new ArrayList<>(held.entrySet())) {
      int slot = e.getKey();
      Held h = e.getValue();
      if (h.phase == Phase.CONSUMING) {
        all.add(release(slot, h));
      } else if (h.phase == Phase.LOADING) {
        drop(slot, h);
        all.add(released(slot, h.epoch));
      }
    }
    long left = Math.max(1, deadlineMs - System.currentTimeMillis());
    return Future.join(all).timeout(left, java.util.concurrent.TimeUnit.MILLISECONDS).<Void>mapEmpty().recover(e -> {
      log.warn("worker {}: {} slot(s) did not finish releasing in time; their unacked messages go back to the queue", workerId, held.size());
      dropAll("grace period over");
      return Future.succeededFuture();
    });
  }

  /** Last step of a stop: OFFLINE, then the liveness session closes (an OFFLINE worker is not declared dead). */
  public Future<Void> offline() {
    stopping = true;
    vertx.cancelTimer(heartbeatTimer);
    vertx.cancelTimer(pollTimer);
    return selfState(WorkerState.OFFLINE, "stopped",
        WorkerState.REGISTERED, WorkerState.WARMING, WorkerState.ACTIVE, WorkerState.DRAINING, WorkerState.SUSPECTED, WorkerState.QUARANTINE)
        .<Void>mapEmpty()
        .eventually(() -> {
          PgConnection c = liveness;
          liveness = null;
          return c == null ? Future.succeededFuture() : c.close();
        });
  }

  private Future<Boolean> selfState(WorkerState to, String why, WorkerState... from) {
    String[] names = java.util.Arrays.stream(from).map(Enum::name).toArray(String[]::new);
    WorkerState was = state;
    return pool.withTransaction(c -> c.preparedQuery(SELF_STATE).execute(Tuple.of(workerId, to.name()).addArrayOfString(names)).compose(r -> {
      if (r.rowCount() == 0) return Future.succeededFuture(false);
      return c.preparedQuery(HISTORY).execute(Tuple.of(workerId, was.name(), to.name(), why)).map(true);
    })).onSuccess(ok -> {
      if (ok) {
        state = to;
        announce.run();
      }
    }).recover(e -> {
      log.warn("worker {}: cannot record state {} ({})", workerId, to, e.getMessage());
      return Future.succeededFuture(false);
    });
  }

  /** Completes when every held slot is gone, or when nothing moved for {@code stallMs} (no leader?), or at the deadline. */
  public Future<Void> awaitHandover(long deadlineMs, long stallMs) {
    Promise<Void> done = Promise.promise();
    long[] lastChange = {System.currentTimeMillis()};
    int[] lastCount = {held.size()};
    long[] timer = {-1};
    timer[0] = vertx.setPeriodic(50, t -> {
      long now = System.currentTimeMillis();
      if (held.size() != lastCount[0]) {
        lastCount[0] = held.size();
        lastChange[0] = now;
      }
      if (held.isEmpty() || now >= deadlineMs || now - lastChange[0] >= stallMs) {
        vertx.cancelTimer(timer[0]);
        done.tryComplete();
      }
    });
    return done.future();
  }
}
