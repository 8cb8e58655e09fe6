package dev.inspection.worker;

import dev.inspection.common.DbWaits;
import dev.inspection.messaging.Envelope;
import dev.inspection.state.AlertEvent;
import dev.inspection.state.IsoInstant;
import dev.inspection.store.Db;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One transaction for the batches of one or more slots (seed 000 §3.1 as corrected by DESIGN.md D1, D4,
 * D5, D7):
 * <ol>
 *   <li>each slot's lease row is read {@code FOR KEY SHARE}: a slot's rows are written only if this worker
 *       owns it at the epoch it consumes under; an epoch bump ({@code SELECT … FOR UPDATE}) waits for the
 *       transaction, and a transaction after the bump sees the new epoch — so a deposed owner commits
 *       nothing for that slot, not even devices the new owner has never written;</li>
 *   <li>one row per device is upserted into {@code device_status_current}, guarded by
 *       {@code (cycle_id, seq)} so an older result never overwrites a newer one; its payload is merged with
 *       the device's profile ({@code merge_payload}, the SQL twin of the in-memory fold; for a profile with a
 *       device time {@code merge_payload_guarded} applies the batch's frames one by one, parameter 11 maps each
 *       such device to them, so a frame older than the stored one changes nothing) and its derived
 *       state (counters, ring, debounce, rate window) is written in the same statement; and only while the
 *       row's {@code current_slot} is the batch's slot (the seed's fencing predicate: during a reshard's grace
 *       window the leader moves {@code current_slot} of remapped devices, after which the old slot's owner
 *       no longer writes them);</li>
 *   <li>the results the device's history policy keeps (every one by default) are inserted into
 *       {@code device_status_history}; a redelivery hits the key and is ignored (D4: written again with the
 *       insert-or-ignore, {@link #commit});</li>
 *   <li>every result is counted once in the per-minute rollups, by the (cycle_id, seq) each rollup row
 *       lists, whatever history keeps ({@link HistoryRollups} writes both);</li>
 *   <li>alert events are inserted (idempotent by their unique key) and {@code alert_current} of every
 *       touched (device, alert) is derived again from its events, never written on its own ({@link AlertWrites}).</li>
 * </ol>
 * Rows are sorted by device id so concurrent transactions take row locks in the same order.
 */
public final class BatchStore {
  private static final Logger log = LoggerFactory.getLogger(BatchStore.class);
  /**
   * Also takes each slot's back-fill lock shared: a back-fill of the slot's spilled rollups never interleaves with this batch ({@link BackFiller});
   * and sets the transaction's {@code plan_cache_mode} ($2, {@link #planMode}) for the statements after it.
   */
  static final String LEASE_CHECK = """
      SELECT slot_id, owner_worker_id, lease_epoch, pg_advisory_xact_lock_shared(hashtext('inspection.backfill.' || current_schema()), slot_id)::text AS backfill_lock,
             set_config('plan_cache_mode', $2, true) AS plan_mode
      FROM slot_lease WHERE slot_id = ANY($1::int[]) ORDER BY slot_id FOR KEY SHARE""";

  /**
   * The payloads ($8, {@link #resultColumns}) and the derived snapshots ($9) go as UTF-8 bytes ({@code bytea[]}, {@code convert_from} in the statement), not as text: the PG client
   * writes a text parameter through Netty's UTF-8 encoder a character at a time, 9.7 % of the node's samples at capacity (the
   * snapshots are most of the characters), and {@code String.getBytes} is about 4x faster per character. The commit bench's
   * full/plain ratio: 2.10 with text, 2.02 with bytes (means of three alternating pairs).
   */
  static final String UPSERT_CURRENT = """
      INSERT INTO device_status_current AS c
        (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id, status_payload, derived_snapshot,
         payload_profile, updated_at)
      SELECT d, sl, sl, s, cy, ca, ep, m, convert_from(p, 'UTF8')::jsonb, convert_from(ds, 'UTF8')::json, pr, now()
      FROM unnest($1::smallint[], $2::bigint[], $3::varchar[], $4::bigint[], $5::bigint[], $6::timestamptz[], $7::varchar[], $8::bytea[],
                  $9::bytea[], $10::varchar[])
        AS t(sl, ep, d, s, cy, ca, m, p, ds, pr)
      ON CONFLICT (device_id) DO UPDATE SET
        seq = EXCLUDED.seq, cycle_id = EXCLUDED.cycle_id, collected_at = EXCLUDED.collected_at,
        writer_epoch = EXCLUDED.writer_epoch, message_id = EXCLUDED.message_id, slot_id = EXCLUDED.slot_id,
        current_slot = EXCLUDED.current_slot, payload_profile = EXCLUDED.payload_profile,
        status_payload = CASE WHEN EXCLUDED.payload_profile = 'default' THEN EXCLUDED.status_payload  -- full-state payloads: replace
          WHEN $11::jsonb ? EXCLUDED.device_id THEN merge_payload_guarded(c.status_payload, $11::jsonb -> EXCLUDED.device_id,  -- device time
            (SELECT rules FROM payload_profile WHERE name = EXCLUDED.payload_profile),
            coalesce((SELECT default_rule FROM payload_profile WHERE name = EXCLUDED.payload_profile), 'replace'),
            (SELECT device_time_field FROM payload_profile WHERE name = EXCLUDED.payload_profile))
          ELSE merge_payload(c.status_payload, EXCLUDED.status_payload,
            (SELECT rules FROM payload_profile WHERE name = EXCLUDED.payload_profile),
            coalesce((SELECT default_rule FROM payload_profile WHERE name = EXCLUDED.payload_profile), 'replace')) END,
        derived_snapshot = coalesce(EXCLUDED.derived_snapshot, c.derived_snapshot),
        updated_at = now()
      WHERE (c.cycle_id, c.seq) < (EXCLUDED.cycle_id, EXCLUDED.seq)
        AND c.current_slot = EXCLUDED.slot_id  -- seed 000 §3.4: only the legal slot's owner writes a device (a reshard moves current_slot)""";


  /**
   * Sent before the history statement when the history lock timeout is on ({@link #historyLockTimeoutMs}): how long it may wait for a lock
   * on history or the rollups; reset ({@link #NO_LOCK_TIMEOUT}) before the alert writes, which wait as long as a lock lasts, as before.
   */
  static final String HISTORY_LOCK_TIMEOUT = "SELECT set_config('lock_timeout', $1, true)";
  static final String NO_LOCK_TIMEOUT = "RESET lock_timeout";

  /**
   * The history statement of a transaction waited out {@code worker.degraded.history.lock.timeout.ms} for a lock (SQLSTATE 55P03): history or
   * its rollups are locked. Its cause is PostgreSQL's error. Not tried again by {@link PoisonSplitter}: {@link CommitGroup} writes the batch again
   * at once with every history row spilled ({@link HistoryLock}).
   */
  static final class HistoryLocked extends RuntimeException {
    HistoryLocked(long timeoutMs, Throwable cause) {
      super("history's write waited " + timeoutMs + " ms for a lock on device_status_history or the rollups (worker.degraded.history.lock.timeout.ms): "
          + cause.getMessage(), cause);
    }
  }

  /** Whether {@code failure} (or one of its causes) is a {@link HistoryLocked}. */
  static boolean historyLocked(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof HistoryLocked) return true;
    }
    return false;
  }

  /** One slot's share of a transaction. */
  public record Part(int slot, long epoch, StatePlanner.Plan plan) {
    int size() {
      return plan.history().size();
    }
  }

  /** Outcome of one slot's batch. */
  public sealed interface Outcome permits Committed, Fenced {}

  /** Committed: rows the whole transaction wrote to current (newer results) and to history (new results it keeps). */
  public record Committed(int currentRows, int historyRows) implements Outcome {}

  /** The lease is not ours at this epoch any more: nothing was written for this slot. */
  public record Fenced(String owner, long epoch) implements Outcome {}

  /** The plan mode of a transaction of more results than {@code worker.generic.plan.max.results}, and the sessions' own. */
  static final String CUSTOM_PLANS = "force_custom_plan";
  static final String GENERIC_PLANS = "force_generic_plan";

  /**
   * How long the store keeps to history's insert-or-ignore after a batch held a result history had: a crashed owner's unacked
   * messages come as many batches, and each written with the plain insert would fail once. Short, as duplicates also come one
   * replay at a time (a probe's rows after a nack or a lost connection): with a 60 s window, a capacity run whose probe replayed a
   * few hundred rows about every 80 s (held rows it had miscounted, fixed in 25ce6cf) kept the store on the insert-or-ignore for
   * most of the run. At most one batch per window is written twice.
   */
  static final long GUARDED_AFTER_DUPLICATE_MS = 5_000;
  /** The first switch is logged at INFO, the next ones within this long at DEBUG (a replay every minute under overload). */
  static final long SWITCH_LOG_QUIET_MS = 600_000;
  /** As if the last INFO line went out a quiet period before the clock's zero, so the first switch is logged at INFO. */
  static final long NEVER_LOGGED = -SWITCH_LOG_QUIET_MS;

  private final Pool pool;
  private final String workerId;
  /** Until when (the clock's millis) history is written with the insert-or-ignore; 0: from the start, the plain insert. */
  private volatile long guardedUntilMs;
  /** When the last INFO line about a switch went out: at first {@link #NEVER_LOGGED}. */
  private volatile long switchLoggedAtMs = NEVER_LOGGED;
  /** Batches written twice because history held one of their results or a rollup row taken for new existed (worker_history_rewrites_total). */
  private final AtomicLong rewrites = new AtomicLong();
  private final Clock clock;
  private final int genericPlanMaxResults;
  /** How long the history statement waits for a lock before the transaction fails with {@link HistoryLocked}; 0: as long as the lock lasts. */
  private final long historyLockTimeoutMs;

  public BatchStore(Pool pool, String workerId) {
    this(pool, workerId, Clock.systemUTC(), 0);
  }

  public BatchStore(Pool pool, String workerId, Clock clock, int genericPlanMaxResults) {
    this(pool, workerId, clock, genericPlanMaxResults, 0);
  }

  /**
   * {@code clock}: where the alert events' look-back starts ({@link AlertWrites#READ_EVENTS}); {@code genericPlanMaxResults}: a transaction of at most
   * this many results runs on generic plans ({@code worker.generic.plan.max.results}, {@link #planMode}); {@code historyLockTimeoutMs}: the longest
   * wait of the history statement for a lock ({@code worker.degraded.history.lock.timeout.ms}, {@link HistoryLocked}), 0 = no limit.
   */
  public BatchStore(Pool pool, String workerId, Clock clock, int genericPlanMaxResults, long historyLockTimeoutMs) {
    this.pool = pool;
    this.workerId = workerId;
    this.clock = clock;
    this.genericPlanMaxResults = genericPlanMaxResults;
    this.historyLockTimeoutMs = historyLockTimeoutMs;
  }

  /**
   * PostgreSQL's plan mode for a transaction of {@code results} results. Planning each statement for its values (the sessions' mode,
   * {@link Db#connectOptions}) is what a large batch needs: its arrays' lengths and the minutes it touches decide the plan, and generic plans
   * cost PostgreSQL more per result at capacity. A small transaction pays the planning of its four statements for one or a few rows: about
   * 40 % of PostgreSQL's CPU at an idle node (perf of the commit sessions). Up to {@code genericMax} results it runs on the connection's
   * generic plans, made once, unless it writes alert events: {@link AlertWrites#READ_EVENTS} is kept to the last days' partitions of alert_event by
   * planning for its cycle floor (a generic plan would lock all of them, 90 by default, at every execution).
   */
  static String planMode(int results, boolean alertEvents, int genericMax) {
    return results <= genericMax && !alertEvents ? GENERIC_PLANS : CUSTOM_PLANS;
  }

  /**
   * Commits several slots' batches in one transaction; the map holds each slot's outcome. History takes the results with a plain
   * insert ({@link HistoryRollups#WRITE_FRESH}): nearly every batch is new results only; so do the rollup rows the planner knows to be
   * new ({@link StatePlanner.HistoryRow#newMinute}). When history already holds one (a redelivery after a crash or a fence, a probe's
   * replay of a result whose confirm was lost), or such a rollup row exists after all, the transaction fails on the key and the batch
   * is written again at once with the insert-or-ignore and the upsert, which skip what history and the rollups hold (D4); the store then
   * keeps to them for {@link #GUARDED_AFTER_DUPLICATE_MS}, as redeliveries come in floods. No other failure is written again here.
   */
  public Future<Map<Integer, Outcome>> commit(List<Part> parts) {
    boolean fresh = writesFresh();
    Future<Map<Integer, Outcome>> first = commit(parts, fresh);
    return !fresh ? first : first.recover(e -> {
      if (!DbErrors.isFreshDuplicate(e)) return Future.failedFuture(e);
      long now = clock.millis();
      guardedUntilMs = now + GUARDED_AFTER_DUPLICATE_MS;
      long total = rewrites.incrementAndGet();
      boolean loud = loud(now, switchLoggedAtMs);
      if (loud) switchLoggedAtMs = now;
      (loud ? log.atInfo() : log.atDebug()).log("history or the rollups already held a row of a batch (a redelivery, a replay, or a rollup row"
          + " written under a slot's earlier owner): the batch is written again with history's insert-or-ignore and the rollups' upsert,"
          + " and so are all batches of the next {} s; {} such batch(es) since start"
          + " (worker_history_rewrites_total) ({})", GUARDED_AFTER_DUPLICATE_MS / 1000, total, DbErrors.of(e).describe());
      return commit(parts, false);
    });
  }

  /** Commits written again with history's insert-or-ignore (and the rollups' upsert) because a plain insert met a row that was there. */
  public long rewrites() {
    return rewrites.get();
  }

  /** Whether a switch at {@code nowMs} is logged at INFO: none was for {@link #SWITCH_LOG_QUIET_MS} (DEBUG otherwise). */
  static boolean loud(long nowMs, long loggedAtMs) {
    return nowMs - loggedAtMs >= SWITCH_LOG_QUIET_MS;
  }

  /** Whether the next commit writes history with a plain insert (false: the insert-or-ignore, after a duplicate, {@link #commit}). */
  boolean writesFresh() {
    return clock.millis() >= guardedUntilMs;
  }

  private Future<Map<Integer, Outcome>> commit(List<Part> parts, boolean fresh) {
    Integer[] slots = parts.stream().map(Part::slot).distinct().toArray(Integer[]::new);
    int results = 0;
    boolean events = false;
    for (Part p : parts) {
      results += p.size();
      events |= !p.plan().events().isEmpty();
    }
    String mode = planMode(results, events, genericPlanMaxResults);
    return Db.inTransaction(pool, conn -> conn.preparedQuery(LEASE_CHECK).execute(Tuple.of(slots, mode)).compose(rows -> {
      Map<Integer, Row> leases = new HashMap<>();
      for (Row r : rows) leases.put((int) r.getShort(0), r);
      Map<Integer, Outcome> outcomes = new HashMap<>();
      List<Part> valid = new ArrayList<>();
      for (Part p : parts) {
        Row r = leases.get(p.slot());
        String owner = r == null ? null : r.getString(1);
        long current = r == null ? -1 : r.getLong(2);
        if (workerId.equals(owner) && current == p.epoch()) valid.add(p);
        else outcomes.put(p.slot(), new Fenced(owner, current));
      }
      if (valid.isEmpty()) return Future.succeededFuture(outcomes);
      return write(conn, valid, AlertWrites.cycleFloor(clock.millis()), fresh, historyLockTimeoutMs).map(c -> {
        for (Part p : valid) outcomes.put(p.slot(), c);
        return outcomes;
      });
    }));
  }

  private record Cur(int slot, long epoch, StatePlanner.CurrentRow row) {}

  private static Future<Committed> write(SqlConnection conn, List<Part> parts, long eventCycleFloor, boolean fresh, long lockTimeoutMs) {
    List<Cur> current = new ArrayList<>();
    List<HistoryRollups.Item> history = new ArrayList<>();
    List<AlertEvent> events = new ArrayList<>();
    List<Long> eventEpochs = new ArrayList<>();
    for (Part p : parts) {
      for (StatePlanner.CurrentRow c : p.plan().current()) current.add(new Cur(p.slot(), p.epoch(), c));
      for (StatePlanner.HistoryRow h : p.plan().history()) history.add(new HistoryRollups.Item(p.slot(), p.epoch(), h));
      for (AlertEvent e : p.plan().events()) {
        events.add(e);
        eventEpochs.add(p.epoch());
      }
    }
    current.sort(Comparator.comparing((Cur c) -> c.row().newest().deviceId()));
    history.sort(Comparator.comparing((HistoryRollups.Item h) -> h.row().envelope().deviceId()).thenComparingLong(h -> h.row().envelope().cycleId())
        .thenComparingLong(h -> h.row().envelope().seq()));
    // a device's newest payload is usually the same object in current and in history: encode it once
    Map<JsonObject, Buffer> encoded = new IdentityHashMap<>(history.size());
    Function<JsonObject, Buffer> once = j -> encoded.computeIfAbsent(j, JsonObject::toBuffer);
    // current and history go out together (the connection pipelines them: one wait for both answers, not two); PostgreSQL runs them in
    // order, and when the first fails the second fails with 25P02 after it, so the batch fails with the first one's error
    Future<RowSet<Row>> up = conn.preparedQuery(UPSERT_CURRENT).execute(currentArrays(current, once));
    // the history lock timeout goes out with them (no round trip of its own) and covers the history statement alone
    boolean limited = lockTimeoutMs > 0 && !history.isEmpty();
    if (limited) conn.preparedQuery(HISTORY_LOCK_TIMEOUT).execute(Tuple.of(String.valueOf(lockTimeoutMs)));
    Future<Integer> written = HistoryRollups.write(conn, history, once, null, fresh);
    Future<Integer> hist = !limited ? written : written.recover(e -> Future.failedFuture(DbWaits.isLockTimeout(e) ? new HistoryLocked(lockTimeoutMs, e) : e));
    return Future.all(up, hist).compose(both -> {
      Future<?> unlimited = limited && !events.isEmpty() ? conn.query(NO_LOCK_TIMEOUT).execute() : Future.succeededFuture();
      return Future.all(unlimited, AlertWrites.write(conn, events, eventEpochs, eventCycleFloor)).map(v -> new Committed(up.result().rowCount(), hist.result()));
    });
  }


  /** One result as the unnest() columns every batch statement starts with. */
  public record ResultRow(int slot, long epoch, Envelope envelope, JsonObject payload) {}

  /**
   * The eight columns (slot, epoch, device, seq, cycle, collected_at, message id, payload JSON) of the
   * batch statements as arrays, in list order; callers add their own columns after them. The payloads go as
   * their JSON's UTF-8 bytes ({@code $8::bytea[]}, read with {@code convert_from($8, 'UTF8')}): Jackson writes
   * the bytes at once, where a text parameter goes through the PG client's encoder a character at a time.
   */
  public static Tuple resultColumns(List<ResultRow> list) {
    return resultColumns(list, JsonObject::toBuffer);
  }

  static Tuple resultColumns(List<ResultRow> list, Function<JsonObject, Buffer> encode) {
    int n = list.size();
    Short[] slot = new Short[n];
    Long[] epoch = new Long[n];
    String[] dev = new String[n];
    Long[] seq = new Long[n];
    Long[] cyc = new Long[n];
    OffsetDateTime[] at = new OffsetDateTime[n];
    String[] mid = new String[n];
    Buffer[] payload = new Buffer[n];
    for (int i = 0; i < n; i++) {
      ResultRow r = list.get(i);
      Envelope e = r.envelope();
      slot[i] = (short) r.slot();
      epoch[i] = r.epoch();
      dev[i] = e.deviceId();
      seq[i] = e.seq();
      cyc[i] = e.cycleId();
      at[i] = IsoInstant.utc(e.collectedAt());
      mid[i] = e.messageId();
      payload[i] = encode.apply(r.payload());
    }
    return Tuple.tuple().addArrayOfShort(slot).addArrayOfLong(epoch).addArrayOfString(dev).addArrayOfLong(seq).addArrayOfLong(cyc)
        .addArrayOfOffsetDateTime(at).addArrayOfString(mid).addArrayOfBuffer(payload);
  }

  private static Tuple currentArrays(List<Cur> list, Function<JsonObject, Buffer> encode) {
    List<ResultRow> rows = new ArrayList<>(list.size());
    Buffer[] derived = new Buffer[list.size()];
    String[] profile = new String[list.size()];
    JsonObject guarded = new JsonObject();
    for (int i = 0; i < list.size(); i++) {
      Cur c = list.get(i);
      rows.add(new ResultRow(c.slot(), c.epoch(), c.row().newest(), c.row().payload()));
      String ds = c.row().derived();
      derived[i] = ds == null ? null : Buffer.buffer(ds.getBytes(StandardCharsets.UTF_8));
      profile[i] = c.row().profile().name();
      if (c.row().guarded() != null) guarded.put(c.row().newest().deviceId(), new JsonArray(new ArrayList<>(c.row().guarded())));
    }
    return resultColumns(rows, encode).addArrayOfBuffer(derived).addArrayOfString(profile).addValue(guarded);
  }
}
