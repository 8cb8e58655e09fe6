package dev.inspection.scheduler;

import dev.inspection.store.Rows;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;

/** Read-only answers about device state: alerts and per-minute rollups (issue 4 reads). */
public final class StateView {
  static final String ALERTS = """
      SELECT a.device_id, a.alert_key, a.state, a.severity, a.first_fired_at, a.last_event_at, a.last_event_id, a.payload, k.acked_at, k.acked_by, k.note
      FROM alert_current a LEFT JOIN alert_ack k USING (device_id, alert_key, first_fired_at)
      WHERE ($1::varchar IS NULL OR a.state = $1) AND ($2::varchar IS NULL OR a.device_id = $2) AND a.severity >= $3
        AND ($4::varchar IS NULL OR a.alert_key = $4)
      ORDER BY a.severity DESC, a.last_event_at DESC LIMIT $5""";
  static final String ACK = """
      INSERT INTO alert_ack (device_id, alert_key, first_fired_at, acked_by, note)
      SELECT device_id, alert_key, first_fired_at, $3, $4 FROM alert_current WHERE device_id = $1 AND alert_key = $2
      ON CONFLICT (device_id, alert_key, first_fired_at) DO UPDATE SET acked_at = now(), acked_by = EXCLUDED.acked_by, note = EXCLUDED.note
      RETURNING first_fired_at, acked_at""";
  static final String EVENTS = """
      SELECT event_id, alert_key, event_type, severity, event_time, cycle_id, seq, payload FROM alert_event
      WHERE device_id = $1 ORDER BY event_time DESC, cycle_id DESC, seq DESC LIMIT $2""";
  static final String ROLLUPS = """
      SELECT minute_bucket, sample_count, down_count, state_changes, last_state FROM device_status_rollup_1m
      WHERE device_id = $1 AND minute_bucket >= $2 AND minute_bucket < $3 ORDER BY minute_bucket LIMIT 10080""";

  private final Pool pool;

  public StateView(Pool pool) {
    this.pool = pool;
  }

  /** Current alerts with filters (null = any). */
  public Future<JsonArray> alerts(String state, String device, int minSeverity, String alertKey, int limit) {
    return pool.preparedQuery(ALERTS).execute(Tuple.of(state, device, minSeverity, alertKey, limit)).map(rows -> {
      JsonArray a = new JsonArray();
      for (Row r : rows) {
        a.add(new JsonObject().put("device_id", r.getString(0)).put("alert_key", r.getString(1)).put("state", r.getString(2))
            .put("severity", (int) r.getShort(3)).put("first_fired_at", r.getOffsetDateTime(4).toString())
            .put("last_event_at", r.getOffsetDateTime(5).toString()).put("last_event_id", r.getLong(6)).put("payload", r.getValue(7))
            .put("acked_at", Rows.iso(r, 8)).put("acked_by", r.getString(9))
            .put("ack_note", r.getString(10)));
      }
      return a;
    });
  }

  /** Acknowledges the current active period of an alert; null when the device has no such alert. */
  public Future<JsonObject> ack(String device, String key, String by, String note) {
    return pool.preparedQuery(ACK).execute(Tuple.of(device, key, by, note)).map(rows -> rows.size() == 0 ? null
        : new JsonObject().put("device_id", device).put("alert_key", key).put("first_fired_at", rows.iterator().next().getOffsetDateTime(0).toString())
            .put("acked_at", rows.iterator().next().getOffsetDateTime(1).toString()).put("acked_by", by));
  }

  /** A device's newest alert events (the source of truth of its alerts). */
  public Future<JsonArray> events(String device, int limit) {
    return pool.preparedQuery(EVENTS).execute(Tuple.of(device, limit)).map(rows -> {
      JsonArray a = new JsonArray();
      for (Row r : rows) {
        a.add(new JsonObject().put("event_id", r.getLong(0)).put("alert_key", r.getString(1)).put("type", r.getString(2))
            .put("severity", (int) r.getShort(3)).put("event_time", r.getOffsetDateTime(4).toString()).put("cycle_id", r.getLong(5))
            .put("seq", r.getLong(6)).put("payload", r.getValue(7)));
      }
      return a;
    });
  }

  /** A device's per-minute rollups in [from, to). */
  public Future<JsonArray> rollups(String device, OffsetDateTime from, OffsetDateTime to) {
    return pool.preparedQuery(ROLLUPS).execute(Tuple.of(device, from, to)).map(rows -> {
      JsonArray a = new JsonArray();
      for (Row r : rows) {
        a.add(new JsonObject().put("minute", r.getOffsetDateTime(0).toString()).put("samples", r.getInteger(1)).put("down", r.getInteger(2))
            .put("state_changes", r.getInteger(3)).put("last_state", r.getString(4)));
      }
      return a;
    });
  }
}
