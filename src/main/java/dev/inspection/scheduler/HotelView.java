package dev.inspection.scheduler;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.ZoneOffset;

/**
 * Hotel rooms as the devices of the {@code hotel_room} profile report them (issue 13 item 4, seed 004): a hotel's
 * rooms, and a room's devices with their merged status. Reads {@code device_status_current} by its hotel_id and room_id
 * columns (V014: generated from the payload of hotel_room devices, compared as text whether the frames sent strings
 * or integers; stored columns rather than expression indexes so that the table's updates stay HOT).
 */
public final class HotelView {
  static final String ROOMS = """
      SELECT room_id, count(*) AS devices,
             max(CASE WHEN jsonb_typeof(status_payload -> 'ts_ms') = 'number' THEN (status_payload ->> 'ts_ms')::numeric END)::bigint AS ts_ms,
             sum(CASE WHEN jsonb_typeof(status_payload -> 'faulty_device_count') = 'array'
                      THEN jsonb_array_length(status_payload -> 'faulty_device_count') ELSE 0 END) AS faults,
             count(*) FILTER (WHERE status_payload ->> 'sys_lock_status' = '1') AS locked,
             max(updated_at) AS updated_at
      FROM device_status_current
      WHERE hotel_id = $1 AND room_id IS NOT NULL
      GROUP BY 1 ORDER BY 1 LIMIT $2""";
  static final String ROOM = """
      SELECT device_id, status_payload, collected_at, updated_at, seq
      FROM device_status_current
      WHERE hotel_id = $1 AND room_id = $2
      ORDER BY device_id LIMIT $3""";

  private final Pool pool;

  public HotelView(Pool pool) {
    this.pool = pool;
  }

  /** The hotel's rooms: devices, newest device time, faults listed, devices reporting the lock closed (1), last write. */
  public Future<JsonArray> rooms(String hotel, int limit) {
    return pool.preparedQuery(ROOMS).execute(Tuple.of(hotel, limit)).map(rows -> {
      JsonArray out = new JsonArray();
      for (Row r : rows) {
        out.add(new JsonObject().put("room_id", r.getString(0)).put("devices", r.getLong(1)).put("ts_ms", r.getLong(2))
            .put("faults", r.getLong(3)).put("devices_locked", r.getLong(4))
            .put("updated_at", r.getOffsetDateTime(5).withOffsetSameInstant(ZoneOffset.UTC).toString()));
      }
      return out;
    });
  }

  /** Every device of the room with its merged status; empty when the room has none. */
  public Future<JsonArray> room(String hotel, String room, int limit) {
    return pool.preparedQuery(ROOM).execute(Tuple.of(hotel, room, limit)).map(rows -> {
      JsonArray out = new JsonArray();
      for (Row r : rows) {
        JsonObject p = r.getJsonObject(1);
        out.add(new JsonObject().put("device_id", r.getString(0)).put("ts_ms", p.getValue("ts_ms")).put("sys_lock_status", p.getValue("sys_lock_status"))
            .put("dev_loops", p.getValue("dev_loops")).put("faults", p.getValue("faulty_device_count")).put("guid", p.getValue("guid"))
            .put("seq", r.getLong(4))
            .put("collected_at", r.getOffsetDateTime(2).withOffsetSameInstant(ZoneOffset.UTC).toString())
            .put("updated_at", r.getOffsetDateTime(3).withOffsetSameInstant(ZoneOffset.UTC).toString()));
      }
      return out;
    });
  }
}
