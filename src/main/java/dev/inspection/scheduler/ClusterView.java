package dev.inspection.scheduler;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;

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
          .put("elected_at", r.getOffsetDateTime(3) == null ? null : r.getOffsetDateTime(3).toString());
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
}
