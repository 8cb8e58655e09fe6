package dev.inspection.scheduler;

import dev.inspection.common.BuildInfo;
import dev.inspection.control.Pacing;
import dev.inspection.messaging.Envelope;
import dev.inspection.store.Rows;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.HashMap;
import java.util.Map;

/** Read-only answers about the control plane, served by every scheduler, leader or follower. */
public final class ClusterView {
  static final String LEADER = "SELECT term, leader_id, leader_url, elected_at FROM scheduler_term WHERE id = 1";
  static final String WORKERS = """
      SELECT w.worker_id, w.state, (extract(epoch FROM now() - w.last_heartbeat) * 1000)::bigint,
             (extract(epoch FROM now() - w.state_since) * 1000)::bigint, w.metadata, w.backlog_metrics,
             (SELECT count(*) FROM slot_lease s WHERE s.owner_worker_id = w.worker_id AND s.state <> 'DRAINING_OLD')
      FROM worker_heartbeat w WHERE ($1::varchar IS NULL OR w.worker_id = $1) ORDER BY w.worker_id""";
  static final String WORKER_SLOTS = "SELECT slot_id, lease_epoch, state FROM slot_lease WHERE owner_worker_id = $1 ORDER BY slot_id";
  static final String ACTIVE = "SELECT count(*) FROM worker_heartbeat WHERE state = 'ACTIVE'";
  static final String HISTORY = """
      SELECT old_state, new_state, reason, term, at FROM worker_state_history WHERE worker_id = $1 ORDER BY id DESC LIMIT 20""";

  private final Pool pool;

  public ClusterView(Pool pool) {
    this.pool = pool;
  }

  public Future<JsonObject> leader() {
    return pool.query(LEADER).execute().map(rows -> {
      Row r = rows.iterator().next();
      return new JsonObject().put("term", r.getLong(0)).put("leader_id", r.getString(1)).put("leader_url", r.getString(2))
          .put("elected_at", Rows.iso(r, 3));
    });
  }

  public Future<JsonArray> workers() {
    return pool.preparedQuery(WORKERS).execute(Tuple.of((String) null)).map(rows -> {
      JsonArray a = new JsonArray();
      for (Row r : rows) a.add(worker(r));
      return a;
    });
  }

  /** One worker with its slots, state history and drain progress; null when unknown. */
  public Future<JsonObject> worker(String id) {
    return pool.preparedQuery(WORKERS).execute(Tuple.of(id)).compose(rows -> {
      if (rows.size() == 0) return Future.succeededFuture(null);
      JsonObject w = worker(rows.iterator().next());
      return pool.preparedQuery(WORKER_SLOTS).execute(Tuple.of(id)).compose(slots -> {
        JsonArray s = new JsonArray();
        for (Row r : slots) s.add(new JsonObject().put("slot_id", (int) r.getShort(0)).put("epoch", r.getLong(1)).put("state", r.getString(2)));
        w.put("slots", s);
        return pool.preparedQuery(HISTORY).execute(Tuple.of(id));
      }).map(hist -> {
        JsonArray h = new JsonArray();
        for (Row r : hist) {
          h.add(new JsonObject().put("from", r.getString(0)).put("to", r.getString(1)).put("reason", r.getString(2)).put("term", r.getLong(3))
              .put("at", r.getOffsetDateTime(4).toString()));
        }
        return w.put("history", h);
      });
    });
  }

  private static JsonObject worker(Row r) {
    JsonObject meta = r.getValue(4) instanceof JsonObject j ? j : new JsonObject();
    long held = r.getLong(6);
    JsonObject w = new JsonObject().put("worker_id", r.getString(0)).put("state", r.getString(1)).put("heartbeat_age_ms", r.getLong(2))
        .put("state_age_ms", r.getLong(3)).put("slots_held", held)
        .put("backlog", r.getValue(5) instanceof JsonObject b ? b.copy().put("slots", (Object) null) : null);
    Long drainFrom = meta.getLong("drain_slots");
    if (drainFrom != null && ("DRAINING".equals(r.getString(1)) || "OFFLINE".equals(r.getString(1)))) {
      long moved = Math.max(0, drainFrom - held);
      w.put("drain", new JsonObject().put("slots_at_start", drainFrom).put("remaining", held)
          .put("percent", drainFrom == 0 ? 100 : (int) (100 * moved / drainFrom)));
    }
    return w;
  }

  /** Cold-start pacing for probes (seed 000 §4.4 A): how fast non-critical devices may be inspected now. */
  public Future<JsonObject> pacing(int minWorkers) {
    return pool.query(ACTIVE).execute().map(rows -> {
      int active = rows.iterator().next().getLong(0).intValue();
      return new JsonObject().put("active_workers", active).put("min_workers", minWorkers).put("factor", Pacing.factor(active, minWorkers));
    });
  }

  static final String OVERVIEW = """
      SELECT (SELECT term FROM scheduler_term WHERE id = 1), (SELECT leader_id FROM scheduler_term WHERE id = 1),
             (SELECT count(*) FROM slot_lease), (SELECT count(*) FROM slot_lease WHERE state = 'ACTIVE'),
             (SELECT count(*) FROM worker_heartbeat WHERE state = 'ACTIVE'),
             (SELECT coalesce(sum((v->>'rate')::float8), 0) FROM worker_heartbeat w, jsonb_each(coalesce(w.backlog_metrics->'slots', '{}')) AS e(k, v)
              WHERE w.state IN ('ACTIVE', 'DRAINING', 'SUSPECTED') AND jsonb_typeof(w.backlog_metrics) = 'object'),
             (SELECT count(*) FROM alert_current WHERE state = 'ACTIVE'),
             (SELECT count(*) FROM dead_letter WHERE state = 'PENDING'), (SELECT leader_url FROM scheduler_term WHERE id = 1)""";
  static final String SLOT_HISTORY = """
      SELECT old_owner, new_owner, old_epoch, new_epoch, reason, old_state, new_state, term, at FROM slot_lease_history
      WHERE slot_id = $1 ORDER BY id DESC LIMIT $2""";
  static final String SLOT_METRICS = """
      SELECT s.slot_id, (w.backlog_metrics->'slots'->(s.slot_id::text)->>'backlog')::bigint, (w.backlog_metrics->'slots'->(s.slot_id::text)->>'lag_ms')::bigint,
             (w.backlog_metrics->'slots'->(s.slot_id::text)->>'rate')::float8
      FROM slot_lease s JOIN worker_heartbeat w ON w.worker_id = s.owner_worker_id AND jsonb_typeof(w.backlog_metrics) = 'object'""";
  static final String VERSIONS = """
      SELECT (SELECT max(resource_version) FROM device_resource), (SELECT max(version) FROM slot_map_version),
             (SELECT string_agg(CASE WHEN type = 'BASELINE' THEN 'baseline:V' ELSE 'V' END || version, ',' ORDER BY installed_rank)
                FROM flyway_schema_history WHERE success AND version IS NOT NULL), (SELECT term FROM scheduler_term WHERE id = 1)""";

  /** The console's first screen in one query. */
  public Future<JsonObject> overview() {
    return pool.query(OVERVIEW).execute().map(rows -> {
      Row r = rows.iterator().next();
      return new JsonObject().put("term", r.getLong(0)).put("leader_id", r.getString(1)).put("slots_total", r.getLong(2))
          .put("slots_active", r.getLong(3)).put("workers_active", r.getLong(4)).put("results_per_s", Math.round(r.getDouble(5) * 10) / 10.0)
          .put("alerts_active", r.getLong(6)).put("dead_letters_pending", r.getLong(7)).put("leader_url", r.getString(8));
    });
  }

  /** Every owner/epoch/state change of a slot, newest first. */
  public Future<JsonArray> slotHistory(int slot, int limit) {
    return pool.preparedQuery(SLOT_HISTORY).execute(Tuple.of(slot, limit)).map(rows -> {
      JsonArray a = new JsonArray();
      for (Row r : rows) {
        a.add(new JsonObject().put("old_owner", r.getString(0)).put("new_owner", r.getString(1)).put("old_epoch", r.getLong(2))
            .put("new_epoch", r.getLong(3)).put("reason", r.getString(4)).put("old_state", r.getString(5)).put("new_state", r.getString(6))
            .put("term", r.getLong(7)).put("at", r.getOffsetDateTime(8).toString()));
      }
      return a;
    });
  }

  /** Per slot: the owner's mailbox, the lag of its last batch and its rate, as the owner reported them. */
  public Future<Map<Integer, JsonObject>> slotMetrics() {
    return pool.query(SLOT_METRICS).execute().map(rows -> {
      Map<Integer, JsonObject> m = new HashMap<>();
      for (Row r : rows) {
        m.put((int) r.getShort(0), new JsonObject().put("mailbox", r.getLong(1)).put("lag_ms", r.getLong(2)).put("rate", r.getDouble(3)));
      }
      return m;
    });
  }

  public Future<JsonObject> versions() {
    return pool.query(VERSIONS).execute().map(rows -> {
      Row r = rows.iterator().next();
      BuildInfo app = BuildInfo.current();
      return new JsonObject().put("resource_version", r.getLong(0)).put("slot_map_version", r.getLong(1) == null ? 1L : r.getLong(1))
          .put("schema_migrations", r.getString(2)).put("term", r.getLong(3)).put("app_version", app.version()).put("app_commit", app.commit())
          .put("envelope_schema", Envelope.SCHEMA_VERSION);
    });
  }
}
