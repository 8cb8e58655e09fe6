package dev.inspection.worker;

import static dev.inspection.control.SlotState.ACTIVE;
import static dev.inspection.control.SlotState.DRAINING_OLD;
import static dev.inspection.control.SlotState.LOADING_NEW;

import dev.inspection.control.SlotState;
import dev.inspection.control.WorkerState;
import dev.inspection.store.Db;
import dev.inspection.worker.LeaseReconciler.Lease;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Every statement the worker runs on {@code slot_lease} and {@code worker_heartbeat}, and the method
 * that runs it. The state machines are the authority: the allowed-from states of every guard come from
 * {@link SlotState#TRANSITIONS} and {@link WorkerState#TRANSITIONS} (passed as {@code varchar[]}), or are
 * a named subset checked against the table when this class loads. The worker never changes an owner or
 * an epoch: only the leader does.
 */
final class LeaseStore {
  /** The states a worker holds a slot in and may hand it back from (DRAINING_OLD's predecessors): the ones it renews. */
  static final Set<SlotState> HELD = SlotState.TRANSITIONS.allowedFrom(DRAINING_OLD);
  /** The new owner's last step of a move: only from LOADING_NEW (MOVING → ACTIVE is the leader cancelling a move). */
  static final SlotState ACTIVATE_FROM = LOADING_NEW;
  static final Set<WorkerState> DRAIN_FROM = WorkerState.TRANSITIONS.allowedFrom(WorkerState.DRAINING);
  /**
   * The table also allows DEAD → OFFLINE, but that is the leader's verdict to revise, not the worker's: a
   * worker declared DEAD had its slots taken with an epoch bump and handed nothing back, so on its way out
   * it leaves DEAD standing (a restart then records DEAD → REGISTERED) instead of claiming a clean exit.
   */
  static final Set<WorkerState> OFFLINE_FROM = without(WorkerState.TRANSITIONS.allowedFrom(WorkerState.OFFLINE), WorkerState.DEAD);

  static {
    SlotState.TRANSITIONS.check(ACTIVATE_FROM, ACTIVE);
  }

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
      WHERE owner_worker_id = $1 AND state = ANY($2::varchar[])""";
  static final String HEARTBEAT = "UPDATE worker_heartbeat SET last_heartbeat = now(), backlog_metrics = $2::jsonb WHERE worker_id = $1 RETURNING state";
  /**
   * The rows are locked in slot order first, the order the leader's bumps and a reshard's switch lock them in
   * ({@code FOR UPDATE}, slot order): renewing them in the index's order deadlocked with the switch, which locks 16
   * slots at a time (ReshardIT: 7 heartbeats and 2 switch transactions failed with 40P01 in 11 s). The lock is
   * {@code FOR NO KEY UPDATE}, the one the update takes anyway: it waits for a bump or a switch, never for a batch's
   * {@code FOR KEY SHARE} (D1). {@code FOR UPDATE} here waited for every batch in flight on the worker's slots, so a
   * batch stuck on a lock (history locked by an operator's statement) held the renewals back, the next heartbeats'
   * renewals took the control pool's three connections, the heartbeats timed out and the leader suspected a worker
   * that was only waiting (FleetModeIT's first CI run of 8354453; {@code WorkerIT}).
   */
  static final String RENEW = """
      WITH mine AS (SELECT slot_id FROM slot_lease WHERE owner_worker_id = $1 AND state = ANY($3::varchar[]) ORDER BY slot_id FOR NO KEY UPDATE)
      UPDATE slot_lease s SET lease_until = now() + $2::bigint * interval '1 millisecond', last_renewed_at = now()
      FROM mine WHERE s.slot_id = mine.slot_id AND s.owner_worker_id = $1 RETURNING s.slot_id, s.lease_epoch, s.state""";
  static final String MY_LEASES = """
      SELECT w.state, s.slot_id, s.lease_epoch, s.state FROM worker_heartbeat w
      LEFT JOIN slot_lease s ON s.owner_worker_id = w.worker_id WHERE w.worker_id = $1""";
  /**
   * LOADING_NEW → ACTIVE once the derived state is loaded (INV-10), for several slots at once, each at its own
   * epoch: one statement, one commit, with a history row per slot (they make per-slot handover times measurable). A
   * slot already ACTIVE at its epoch (loaded again after a drop) is left as it is.
   */
  static final String ACTIVATE_ALL = """
      WITH k AS (SELECT * FROM unnest($1::smallint[], $2::bigint[]) AS k(s, e)),
      lk AS (SELECT l.slot_id FROM slot_lease l JOIN k ON l.slot_id = k.s ORDER BY l.slot_id FOR NO KEY UPDATE OF l),  -- slot order and lock, as RENEW
      upd AS (
        UPDATE slot_lease l SET state = 'ACTIVE', state_since = now(), updated_at = now()
        FROM k JOIN lk ON lk.slot_id = k.s WHERE l.slot_id = k.s AND l.owner_worker_id = $3 AND l.lease_epoch = k.e AND l.state = $5::varchar
        RETURNING l.slot_id, l.lease_epoch),
      hist AS (
        INSERT INTO slot_lease_history (slot_id, old_owner, new_owner, old_epoch, new_epoch, reason, old_state, new_state)
        SELECT slot_id, $3, $3, lease_epoch, lease_epoch, $4, $5::varchar, 'ACTIVE' FROM upd)
      SELECT slot_id FROM upd
      UNION ALL  -- already ACTIVE at that epoch (a slot loaded again after a drop); this snapshot precedes upd
      SELECT l.slot_id FROM slot_lease l JOIN k ON l.slot_id = k.s AND l.lease_epoch = k.e
      WHERE l.owner_worker_id = $3 AND l.state = 'ACTIVE'""";
  static final String RELEASED = """
      WITH old AS (SELECT slot_id, state FROM slot_lease
                   WHERE slot_id = $1 AND owner_worker_id = $2 AND lease_epoch = $3 AND state = ANY($4::varchar[])),
      upd AS (
        UPDATE slot_lease s SET state = 'DRAINING_OLD', state_since = now(), updated_at = now()
        FROM old WHERE s.slot_id = old.slot_id AND s.lease_epoch = $3 AND s.state = old.state RETURNING s.slot_id, old.state)
      INSERT INTO slot_lease_history (slot_id, old_owner, new_owner, old_epoch, new_epoch, reason, old_state, new_state)
      SELECT slot_id, $2, $2, $3, $3, 'released', state, 'DRAINING_OLD' FROM upd""";
  /** The worker's own state, locked so that the state checked is the state changed. */
  static final String LOCK_SELF = "SELECT state FROM worker_heartbeat WHERE worker_id = $1 FOR UPDATE";
  static final String SELF_STATE = """
      UPDATE worker_heartbeat SET state = $2, state_since = now() WHERE worker_id = $1 AND state = ANY($3::varchar[]) RETURNING worker_id""";
  static final String OTHERS_ACTIVE = "SELECT count(*) FROM worker_heartbeat WHERE state = 'ACTIVE' AND worker_id <> $1";

  /** This worker's state ({@code null}: it has no row) and its leases, as one read. */
  record MyLeases(WorkerState worker, List<Lease> leases) {}

  private final Pool pool;
  private final String workerId;

  LeaseStore(Pool pool, String workerId) {
    this.pool = pool;
    this.workerId = workerId;
  }

  String workerId() {
    return workerId;
  }

  /**
   * The states a start records after {@code before} (the row's state; {@code null}: no row): a previous
   * incarnation that neither left (OFFLINE) nor was declared DEAD ended without saying so, and is recorded
   * DEAD first. Consecutive pairs are history rows.
   */
  static List<WorkerState> restart(WorkerState before) {
    List<WorkerState> path = new ArrayList<>();
    path.add(before);
    if (before != null && !before.canMoveTo(WorkerState.REGISTERED)) path.add(WorkerState.DEAD);
    path.add(WorkerState.REGISTERED);
    return path;
  }

  /** REGISTERED with its history, and whatever an earlier incarnation held handed back, in one transaction. */
  Future<Void> register(JsonObject metadata) {
    return Db.inTransaction(pool, c -> c.preparedQuery(PREVIOUS).execute(Tuple.of(workerId)).compose(prev -> {
      List<WorkerState> path = restart(prev.size() == 0 ? null : WorkerState.parse(prev.iterator().next().getString(0)));
      Future<?> f = Future.succeededFuture();
      for (int i = 1; i < path.size(); i++) {
        WorkerState from = path.get(i - 1);
        WorkerState to = path.get(i);
        if (from != null) WorkerState.TRANSITIONS.check(from, to);
        String why = to == WorkerState.DEAD ? "process restarted" : "process started";
        Future<?> step = to == WorkerState.REGISTERED ? f.compose(v -> c.preparedQuery(REGISTER).execute(Tuple.of(workerId, metadata))) : f;
        f = step.compose(v -> history(c, from, to, why));
      }
      return f.compose(v -> c.preparedQuery(RELEASE_LEFTOVERS).execute(Tuple.of(workerId).addArrayOfString(names(HELD))));
    })).mapEmpty();
  }

  /** Reports the backlog figures; the worker's state, or empty when its row is gone. */
  Future<Optional<WorkerState>> heartbeat(JsonObject backlog) {
    return pool.preparedQuery(HEARTBEAT).execute(Tuple.of(workerId, backlog))
        .map(rows -> rows.size() == 0 ? Optional.empty() : Optional.of(WorkerState.parse(rows.iterator().next().getString(0))));
  }

  /** Extends every lease this worker holds; a plain update that never waits on a batch's {@code FOR KEY SHARE} (D1). */
  Future<List<Lease>> renew(long ttlMs) {
    return pool.preparedQuery(RENEW).execute(Tuple.of(workerId, ttlMs).addArrayOfString(names(HELD))).map(rows -> {
      List<Lease> leases = new ArrayList<>();
      for (Row row : rows) leases.add(new Lease(row.getShort(0), row.getLong(1), SlotState.parse(row.getString(2))));
      return leases;
    });
  }

  Future<MyLeases> myLeases() {
    return pool.preparedQuery(MY_LEASES).execute(Tuple.of(workerId)).map(rows -> {
      List<Lease> leases = new ArrayList<>();
      WorkerState mine = null;
      for (Row row : rows) {
        mine = WorkerState.parse(row.getString(0));
        if (row.getValue(1) != null) leases.add(new Lease(row.getShort(1), row.getLong(2), SlotState.parse(row.getString(3))));
      }
      return new MyLeases(mine, leases);
    });
  }

  /** INV-10 done for several slots (slot → epoch): ACTIVE where the lease is still this worker's at that epoch; the slots that are ACTIVE now. */
  Future<Set<Integer>> activate(Map<Integer, Long> epochs, String reason) {
    Short[] slots = new Short[epochs.size()];
    Long[] at = new Long[epochs.size()];
    int i = 0;
    for (Map.Entry<Integer, Long> e : epochs.entrySet()) {
      slots[i] = e.getKey().shortValue();
      at[i++] = e.getValue();
    }
    return pool.preparedQuery(ACTIVATE_ALL).execute(Tuple.of(slots, at, workerId, reason, ACTIVATE_FROM.name())).map(rows -> {
      Set<Integer> out = new HashSet<>();
      for (Row r : rows) out.add((int) r.getShort(0));
      return out;
    });
  }

  /** The old owner's half of a move: DRAINING_OLD at this epoch; false when the lease is no longer this worker's to hand back. */
  Future<Boolean> released(int slot, long epoch) {
    return pool.preparedQuery(RELEASED).execute(Tuple.of(slot, workerId, epoch).addArrayOfString(names(HELD))).map(r -> r.rowCount() == 1);
  }

  /**
   * The worker's own move to {@code to} from one of {@code from}, with its history row; the state it left,
   * or empty when it was in none of them.
   */
  Future<Optional<WorkerState>> selfState(WorkerState to, Set<WorkerState> from, String why) {
    return Db.inTransaction(pool, c -> c.preparedQuery(LOCK_SELF).execute(Tuple.of(workerId)).compose(rows -> {
      WorkerState was = rows.size() == 0 ? null : WorkerState.parse(rows.iterator().next().getString(0));
      if (was == null || !from.contains(was)) return Future.succeededFuture(Optional.<WorkerState>empty());
      WorkerState.TRANSITIONS.check(was, to);
      return c.preparedQuery(SELF_STATE).execute(Tuple.of(workerId, to.name()).addArrayOfString(names(from))).compose(r -> r.rowCount() == 0
          ? Future.succeededFuture(Optional.<WorkerState>empty())
          : history(c, was, to, why).map(Optional.of(was)));
    }));
  }

  /** Whether another worker is ACTIVE (one that could take this worker's slots). */
  Future<Boolean> othersActive() {
    return pool.preparedQuery(OTHERS_ACTIVE).execute(Tuple.of(workerId)).map(r -> r.iterator().next().getLong(0) > 0);
  }

  private Future<?> history(SqlConnection c, WorkerState from, WorkerState to, String why) {
    return c.preparedQuery(HISTORY).execute(Tuple.of(workerId, from == null ? null : from.name(), to.name(), why));
  }

  static <E extends Enum<E>> String[] names(Set<E> states) {
    return states.stream().map(Enum::name).sorted().toArray(String[]::new);
  }

  private static Set<WorkerState> without(Set<WorkerState> states, WorkerState left) {
    Set<WorkerState> s = EnumSet.copyOf(states);
    s.remove(left);
    return Set.copyOf(s);
  }
}
