package dev.inspection.scheduler;

import dev.inspection.common.ApiError;
import dev.inspection.scheduler.ReshardPlan.MapVersion;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The slot map's versions in {@code slot_map_version} (D11): read for the API and console, and a reshard
 * scheduled by the leader in a term-fenced transaction ({@link Leadership#fenced}) that decides with
 * {@link ReshardPlan} on the database's clock, the one the effective time and window are compared with.
 */
public final class SlotMaps {
  private static final Logger log = LoggerFactory.getLogger(SlotMaps.class);

  static final String VERSIONS = "SELECT version, total_slots, effective_at, window_until, now(), retired_at FROM slot_map_version ORDER BY version";
  /** The same, locked: two requests at once schedule one version, the second sees it and is refused. */
  static final String VERSIONS_LOCKED = "SELECT version, total_slots, effective_at, window_until, now(), retired_at FROM slot_map_version ORDER BY version FOR UPDATE";
  /** Versions whose effective time has come and whose current_slot switch has not run (or was cut short). */
  static final String DUE = """
      SELECT v.version, v.total_slots, (SELECT p.total_slots FROM slot_map_version p WHERE p.version < v.version ORDER BY p.version DESC LIMIT 1)
      FROM slot_map_version v WHERE v.version > 1 AND v.effective_at <= now() AND v.switched_at IS NULL ORDER BY v.version""";
  /**
   * The new version's slots get their lease rows now, before the effective time, so the leader hands them to workers
   * (who declare their queues as they open them) while nothing is routed there yet; at the new version. ORPHANED, not
   * FREE: empty slots are given out at once to the least loaded workers, not in a new installation's cold-start waves
   * (32 new slots took 43 s in waves in the drill).
   */
  static final String NEW_SLOTS = """
      INSERT INTO slot_lease (slot_id, slot_map_version, state) SELECT g, $2, 'ORPHANED' FROM generate_series(0, $1 - 1) g ON CONFLICT DO NOTHING""";
  /** The version probes stamp with: the newest one the leader has switched (version 1 needs no switch). */
  static final String STAMP = "SELECT version, total_slots FROM slot_map_version WHERE version = 1 OR switched_at IS NOT NULL ORDER BY version DESC LIMIT 1";
  static final String COUNT = "SELECT coalesce(max(slot_id) + 1, 0)::int FROM slot_lease";
  static final String INSERT = "INSERT INTO slot_map_version (version, total_slots, effective_at, window_until, term) VALUES ($1, $2, $3, $4, $5)";

  private final Pool pool;
  private final Leadership leadership;
  private final ReshardPlan.Settings settings;
  private final SlotRetire retire;
  private final Runnable moved;
  private boolean switching;
  /** Lease rows (max slot + 1), read every 5 s: a reshard adds slots before the nodes' slots.total says so. */
  private volatile int slotCount;

  /**
   * @param moved told when a version's {@code current_slot} switch has finished: the leader's device count per slot
   *     ({@link ControlLoop#devicesMoved}) is stale from then on
   */
  SlotMaps(Pool pool, Leadership leadership, ReshardPlan.Settings settings, SlotRetire retire, Runnable moved) {
    this.moved = moved;
    this.retire = retire;
    this.pool = pool;
    this.leadership = leadership;
    this.settings = settings;
  }

  /** Slots that have lease rows, as last read (0 before the first read). */
  public int slotCount() {
    return slotCount;
  }

  void countSlots() {
    pool.query(COUNT).execute().onSuccess(rows -> {
      for (Row r : rows) slotCount = r.getInteger(0);
    }).onFailure(e -> log.debug("cannot count the slots: {}", e.toString()));
  }

  /** Versions, the map in force and the pending change with its countdown ({@link ReshardPlan#status}). */
  public Future<JsonObject> status() {
    return read(pool, VERSIONS).map(r -> ReshardPlan.status(r.versions(), r.now()));
  }

  /**
   * What a probe needs ({@code GET /api/v1/probe/slot-map}): the status, and under {@code stamp} the version it
   * stamps results with and hashes devices by: the newest the leader has switched, so a probe never routes a
   * device to a slot before the switch has moved the device there.
   */
  public Future<JsonObject> forProbes() {
    return status().compose(st -> pool.query(STAMP).execute().map(rows -> {
      for (Row r : rows) st.put("stamp", new JsonObject().put("version", r.getLong(0)).put("slots", r.getInteger(1)));
      return st;
    }));
  }

  /** Leader: schedules version v+1 with {@code slots}; fails with an {@link ApiError} when the plan refuses. */
  Future<JsonObject> schedule(int slots) {
    long term = leadership.term();
    return leadership.fenced(c -> read(c, VERSIONS_LOCKED).compose(r -> {
      ReshardPlan.Outcome o = ReshardPlan.schedule(r.versions(), slots, r.now(), settings);
      if (o.refused() != null) return Future.failedFuture(new ApiError(o.refused().status(), o.refused().message()));
      MapVersion v = o.scheduled();
      return c.preparedQuery(INSERT).execute(Tuple.of(v.version(), v.totalSlots(), utc(v.effectiveAt()), utc(v.windowUntil()), term))
          .compose(x -> c.preparedQuery(NEW_SLOTS).execute(Tuple.of(v.totalSlots(), v.version())))
          .map(x -> {
            List<MapVersion> after = new ArrayList<>(r.versions());
            after.add(v);
            log.info("reshard scheduled by term {}: slot map version {} with {} slots, effective at {}, grace window until {}", term, v.version(),
                v.totalSlots(), v.effectiveAt(), v.windowUntil());
            return ReshardPlan.status(after, r.now());
          });
    }));
  }

  /**
   * Leader, every tick, on the scheduler's context: runs the {@code current_slot} switch ({@link SlotSwitch}) of a
   * version whose effective time has come, then retires the slots a shrink gave up once its window has closed
   * ({@link SlotRetire}); one run at a time; a failed or deposed run is picked up again by the next tick or the next
   * leader (the version stays without {@code switched_at} or {@code retired_at}).
   */
  void switchDue() {
    if (switching || !leadership.leading()) return;
    switching = true;
    pool.preparedQuery(DUE).execute().compose(rows -> { // prepared, like SlotRetire.DUE: both run twice a second, parsed once per connection
      Future<Long> chain = Future.succeededFuture(0L);
      for (Row r : rows) {
        long version = r.getLong(0);
        int slots = r.getInteger(1);
        int from = r.getInteger(2);
        chain = chain.compose(x -> new SlotSwitch(leadership::fenced).run(version, from, slots).onSuccess(m -> moved.run()));
      }
      return chain;
    }).compose(x -> pool.preparedQuery(SlotRetire.DUE).execute()).compose(rows -> {
      Future<Boolean> chain = Future.succeededFuture(true);
      for (Row r : rows) {
        long version = r.getLong(0);
        int slots = r.getInteger(1);
        int most = r.getInteger(2);
        chain = chain.compose(done -> done ? retire.run(version, slots, most) : Future.succeededFuture(false));
      }
      return chain;
    }).onComplete(ar -> {
      switching = false;
      if (ar.failed()) log.warn("slot map switch or retirement failed, retried on the next tick: {}", ar.cause().toString());
    });
  }

  private record Read(List<MapVersion> versions, Instant now) {}

  private static Future<Read> read(SqlClient c, String sql) {
    return c.query(sql).execute().map(SlotMaps::read);
  }

  private static Read read(RowSet<Row> rows) {
    List<MapVersion> out = new ArrayList<>();
    Instant now = null;
    for (Row r : rows) {
      OffsetDateTime w = r.getOffsetDateTime(3);
      OffsetDateTime retired = r.getOffsetDateTime(5);
      out.add(new MapVersion(r.getLong(0), r.getInteger(1), r.getOffsetDateTime(2).toInstant(), w == null ? null : w.toInstant(),
          retired == null ? null : retired.toInstant()));
      now = r.getOffsetDateTime(4).toInstant();
    }
    return new Read(out, now == null ? Instant.now() : now);
  }

  private static OffsetDateTime utc(Instant i) {
    return OffsetDateTime.ofInstant(i, ZoneOffset.UTC);
  }
}
