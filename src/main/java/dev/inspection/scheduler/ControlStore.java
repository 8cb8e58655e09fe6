package dev.inspection.scheduler;

import dev.inspection.control.Liveness;
import dev.inspection.control.SlotState;
import dev.inspection.control.WorkerState;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The control plane's SQL. Reads run on the pool; every write takes the connection of a term-fenced
 * transaction ({@link Leadership#fenced}) and is a compare-and-set on the row's current state and epoch,
 * so a write based on a stale read changes nothing. Ages are computed by PostgreSQL's clock, the one
 * clock every node shares.
 */
public final class ControlStore {
  static final String READ_WORKERS = """
      SELECT worker_id, state, (extract(epoch FROM now() - last_heartbeat) * 1000)::bigint,
             (extract(epoch FROM now() - state_since) * 1000)::bigint, backlog_metrics
      FROM worker_heartbeat ORDER BY worker_id""";
  static final String READ_SLOTS = """
      SELECT slot_id, owner_worker_id, lease_epoch, state, target_owner, (extract(epoch FROM now() - state_since) * 1000)::bigint,
             coalesce(lease_until < now() - $1::bigint * interval '1 millisecond', false)
      FROM slot_lease ORDER BY slot_id""";
  /** A worker's liveness lock is free exactly when its database session is gone (the process died). */
  static final String LIVENESS = """
      SELECT worker_id FROM worker_heartbeat
      WHERE worker_id = ANY($2::varchar[]) AND pg_try_advisory_xact_lock(hashtext($1), hashtext(worker_id))""";
  static final String WORKER_TRANSITIONS = """
      WITH t AS (SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::varchar[]) AS t(id, old, new, reason)),
      upd AS (
        UPDATE worker_heartbeat w SET state = t.new, state_since = now()
        FROM t WHERE w.worker_id = t.id AND w.state = t.old
        RETURNING w.worker_id, t.old, t.new, t.reason)
      INSERT INTO worker_state_history (worker_id, old_state, new_state, reason, term)
      SELECT worker_id, old, new, reason, $5 FROM upd RETURNING worker_id""";
  /** D1: an epoch bump first takes the row lock that a batch's FOR KEY SHARE holds, so it waits for that batch. */
  static final String LOCK_SLOTS = "SELECT slot_id FROM slot_lease WHERE slot_id = ANY($1::int[]) ORDER BY slot_id FOR UPDATE";
  /** {@code allowed_from}: per row, the states its new state may be entered from (comma-separated, from {@link SlotState#TRANSITIONS}). */
  static final String BUMP = """
      WITH t AS (SELECT * FROM unnest($1::int[], $2::bigint[], $3::varchar[], $4::varchar[], $5::varchar[], $8::varchar[])
                 AS t(slot, old_epoch, new_owner, new_state, reason, allowed_from)),
      old AS (SELECT s.slot_id, s.owner_worker_id, s.lease_epoch, s.state FROM slot_lease s JOIN t ON s.slot_id = t.slot AND s.lease_epoch = t.old_epoch),
      upd AS (
        UPDATE slot_lease s SET owner_worker_id = t.new_owner, lease_epoch = s.lease_epoch + 1, state = t.new_state,
          target_owner = NULL, state_since = now(), leader_term = $6, last_renewed_at = now(), updated_at = now(),
          lease_until = CASE WHEN t.new_owner IS NULL THEN NULL ELSE now() + $7::bigint * interval '1 millisecond' END
        FROM t WHERE s.slot_id = t.slot AND s.lease_epoch = t.old_epoch AND s.state = ANY(string_to_array(t.allowed_from, ','))
        RETURNING s.slot_id, s.lease_epoch, s.owner_worker_id, s.state, t.reason)
      INSERT INTO slot_lease_history (slot_id, old_owner, new_owner, old_epoch, new_epoch, reason, old_state, new_state, term)
      SELECT u.slot_id, o.owner_worker_id, u.owner_worker_id, o.lease_epoch, u.lease_epoch, u.reason, o.state, u.state, $6
      FROM upd u JOIN old o USING (slot_id) RETURNING slot_id""";
  /** A compare-and-set on the state read ({@code old}), which must also be one MOVING may be entered from ($8). */
  static final String TO_MOVING = """
      WITH t AS (SELECT * FROM unnest($1::int[], $2::bigint[], $3::varchar[], $4::varchar[], $5::varchar[], $6::varchar[])
                 AS t(slot, epoch, owner, old, target, reason)),
      upd AS (
        UPDATE slot_lease s SET state = 'MOVING', target_owner = t.target, state_since = now(), leader_term = $7, updated_at = now()
        FROM t WHERE s.slot_id = t.slot AND s.lease_epoch = t.epoch AND s.owner_worker_id = t.owner AND s.state = t.old
          AND s.state = ANY($8::varchar[])
        RETURNING s.slot_id, s.lease_epoch, s.owner_worker_id, t.old, t.target, t.reason)
      INSERT INTO slot_lease_history (slot_id, old_owner, new_owner, old_epoch, new_epoch, reason, old_state, new_state, term)
      SELECT slot_id, owner_worker_id, target, lease_epoch, lease_epoch, reason, old, 'MOVING', $7 FROM upd RETURNING slot_id""";
  static final String DEVICES_PER_SLOT = "SELECT current_slot, count(*) FROM device_status_current GROUP BY current_slot";
  static final String CRITICAL_DEVICES = "SELECT device_id FROM device_resource WHERE priority = 1 AND enabled";
  static final String COOLDOWNS = """
      SELECT slot_id, old_owner, (extract(epoch FROM at) * 1000)::bigint FROM slot_lease_history
      WHERE reason IN ('rebalance', 'scale-out') AND new_state = 'MOVING' AND at > now() - $1::bigint * interval '1 millisecond'""";
  /** $6: the states DRAINING may be entered from; a worker in any of them may be drained. */
  static final String DRAIN = """
      WITH upd AS (
        UPDATE worker_heartbeat SET state = 'DRAINING', state_since = now(),
          metadata = coalesce(metadata, '{}'::jsonb) || jsonb_build_object('drain_slots', $5::int)
        WHERE worker_id = $1 AND state = ANY($6::varchar[]) RETURNING worker_id, state)
      INSERT INTO worker_state_history (worker_id, old_state, new_state, reason, term)
      SELECT worker_id, $2, 'DRAINING', $3, $4 FROM upd RETURNING worker_id""";

  /** A worker as the leader sees it. */
  public record WorkerRow(String id, WorkerState state, long heartbeatAgeMs, long stateAgeMs, JsonObject metrics) {}

  /** A slot lease as the leader sees it. */
  public record SlotRow(int slot, String owner, long epoch, SlotState state, String target, long stateAgeMs, boolean expired) {}

  /** One owner/epoch change from the state read ({@code from}): {@code newOwner} null orphans the slot. */
  public record Bump(int slot, long oldEpoch, SlotState from, String newOwner, SlotState newState, String reason) {}

  /** A slot to mark MOVING towards {@code target}, as it was read. */
  public record SlotMove(SlotRow row, String target, String reason) {}

  /** One worker state change. */
  public record WorkerChange(String worker, WorkerState from, WorkerState to, String reason) {}

  /** The allowed-from lists of the guards, read from the state machines so SQL and Java cannot disagree. */
  private static final String[] TO_DRAINING_FROM = WorkerState.TRANSITIONS.namesAllowedFrom(WorkerState.DRAINING);
  private static final String[] TO_MOVING_FROM = SlotState.TRANSITIONS.namesAllowedFrom(SlotState.MOVING);

  private final Pool pool;
  private final String livenessNamespace;

  public ControlStore(Pool pool, String schema) {
    this.pool = pool;
    this.livenessNamespace = Liveness.namespace(schema);
  }

  public Future<List<WorkerRow>> workers() {
    return pool.preparedQuery(READ_WORKERS).execute().map(rows -> { // prepared: the leader reads it every round (twice a second), parsed once per connection
      List<WorkerRow> out = new ArrayList<>();
      for (Row r : rows) {
        Object m = r.getValue(4);
        out.add(new WorkerRow(r.getString(0), WorkerState.parse(r.getString(1)), r.getLong(2), r.getLong(3),
            m instanceof JsonObject j ? j : new JsonObject()));
      }
      return out;
    });
  }

  public Future<List<SlotRow>> slots(long expiryGraceMs) {
    return pool.preparedQuery(READ_SLOTS).execute(Tuple.of(expiryGraceMs)).map(rows -> {
      List<SlotRow> out = new ArrayList<>();
      for (Row r : rows) {
        out.add(new SlotRow(r.getShort(0), r.getString(1), r.getLong(2), SlotState.parse(r.getString(3)), r.getString(4), r.getLong(5),
            r.getBoolean(6)));
      }
      return out;
    });
  }

  /**
   * The workers among {@code candidates} whose liveness lock could be taken: their process is gone. One statement in its own
   * (implicit) transaction: the locks it takes go at its end, as they went at the COMMIT of the BEGIN / statement / COMMIT it
   * was until issue 11 (two round trips less, twice a second).
   */
  public Future<Set<String>> crashed(List<String> candidates) {
    if (candidates.isEmpty()) return Future.succeededFuture(Set.of());
    return pool.preparedQuery(LIVENESS).execute(Tuple.of(livenessNamespace).addArrayOfString(candidates.toArray(String[]::new)))
        .map(rows -> {
          Set<String> out = new HashSet<>();
          for (Row r : rows) out.add(r.getString(0));
          return out;
        });
  }

  public Future<Map<Integer, Long>> devicesPerSlot() {
    return pool.query(DEVICES_PER_SLOT).execute().map(rows -> {
      Map<Integer, Long> out = new HashMap<>();
      for (Row r : rows) out.put((int) r.getShort(0), r.getLong(1));
      return out;
    });
  }

  public Future<List<String>> criticalDevices() {
    return pool.query(CRITICAL_DEVICES).execute().map(rows -> {
      List<String> out = new ArrayList<>();
      for (Row r : rows) out.add(r.getString(0));
      return out;
    });
  }

  /** Recent rebalance moves, so a new leader honours the cooldowns of the previous one: slot → ms, source → ms. */
  public Future<Void> cooldowns(long withinMs, Map<Integer, Long> slots, Map<String, Long> sources) {
    return pool.preparedQuery(COOLDOWNS).execute(Tuple.of(withinMs)).map(rows -> {
      for (Row r : rows) {
        slots.merge((int) r.getShort(0), r.getLong(2), Math::max);
        if (r.getString(1) != null) sources.merge(r.getString(1), r.getLong(2), Math::max);
      }
      return null;
    });
  }

  /** Every write below first checks its transitions against the state machine: an illegal one is a bug and writes nothing. */
  static Future<Set<String>> applyWorkerChanges(SqlConnection c, List<WorkerChange> changes, long term) {
    int n = changes.size();
    String[] id = new String[n];
    String[] from = new String[n];
    String[] to = new String[n];
    String[] why = new String[n];
    for (int i = 0; i < n; i++) {
      WorkerChange w = changes.get(i);
      WorkerState.TRANSITIONS.check(w.from(), w.to());
      id[i] = w.worker();
      from[i] = w.from().name();
      to[i] = w.to().name();
      why[i] = w.reason();
    }
    return c.preparedQuery(WORKER_TRANSITIONS).execute(Tuple.tuple().addArrayOfString(id).addArrayOfString(from).addArrayOfString(to)
        .addArrayOfString(why).addLong(term)).map(ControlStore::ids);
  }

  static Future<Set<Integer>> applyBumps(SqlConnection c, List<Bump> bumps, long term, long leaseTtlMs) {
    int n = bumps.size();
    Integer[] slot = new Integer[n];
    Long[] epoch = new Long[n];
    String[] owner = new String[n];
    String[] state = new String[n];
    String[] why = new String[n];
    String[] allowedFrom = new String[n];
    for (int i = 0; i < n; i++) {
      Bump b = bumps.get(i);
      SlotState.TRANSITIONS.check(b.from(), b.newState());
      if (!SlotState.bumpsEpoch(b.from(), b.newState())) throw new IllegalArgumentException("slot " + b.slot() + ": " + b.newState() + " needs no epoch bump");
      slot[i] = b.slot();
      epoch[i] = b.oldEpoch();
      owner[i] = b.newOwner();
      state[i] = b.newState().name();
      why[i] = b.reason();
      allowedFrom[i] = String.join(",", SlotState.TRANSITIONS.namesAllowedFrom(b.newState()));
    }
    return c.preparedQuery(LOCK_SLOTS).execute(Tuple.of((Object) slot))
        .compose(locked -> c.preparedQuery(BUMP).execute(Tuple.tuple().addArrayOfInteger(slot).addArrayOfLong(epoch).addArrayOfString(owner)
            .addArrayOfString(state).addArrayOfString(why).addLong(term).addLong(leaseTtlMs).addArrayOfString(allowedFrom)))
        .map(ControlStore::slotIds);
  }

  static Future<Set<Integer>> applyMoves(SqlConnection c, List<SlotMove> moves, long term) {
    int n = moves.size();
    Integer[] slot = new Integer[n];
    Long[] epoch = new Long[n];
    String[] owner = new String[n];
    String[] from = new String[n];
    String[] target = new String[n];
    String[] why = new String[n];
    for (int i = 0; i < n; i++) {
      SlotRow r = moves.get(i).row();
      SlotState.TRANSITIONS.check(r.state(), SlotState.MOVING);
      slot[i] = r.slot();
      epoch[i] = r.epoch();
      owner[i] = r.owner();
      from[i] = r.state().name();
      target[i] = moves.get(i).target();
      why[i] = moves.get(i).reason();
    }
    return c.preparedQuery(TO_MOVING).execute(Tuple.tuple().addArrayOfInteger(slot).addArrayOfLong(epoch).addArrayOfString(owner)
        .addArrayOfString(from).addArrayOfString(target).addArrayOfString(why).addLong(term).addArrayOfString(TO_MOVING_FROM))
        .map(ControlStore::slotIds);
  }

  static Future<Boolean> drain(SqlConnection c, String worker, WorkerState from, String reason, long term, int slotsHeld) {
    WorkerState.TRANSITIONS.check(from, WorkerState.DRAINING);
    return c.preparedQuery(DRAIN).execute(Tuple.of(worker, from.name(), reason, term, slotsHeld).addArrayOfString(TO_DRAINING_FROM))
        .map(rows -> rows.size() > 0);
  }

  private static Set<String> ids(RowSet<Row> rows) {
    Set<String> out = new HashSet<>();
    for (Row r : rows) out.add(r.getString(0));
    return out;
  }

  private static Set<Integer> slotIds(RowSet<Row> rows) {
    Set<Integer> out = new HashSet<>();
    for (Row r : rows) out.add(r.getInteger(0));
    return out;
  }
}
