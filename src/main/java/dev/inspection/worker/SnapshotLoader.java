package dev.inspection.worker;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.HashMap;
import java.util.Map;

/**
 * INV-10: a worker taking over a slot loads the derived state of every device of that slot before it
 * consumes, in pages in device order (seed 000 §3.2: 1,000 rows per page). No derived value lives only
 * in memory (D7): what is loaded here is exactly what the previous owner committed.
 */
public final class SnapshotLoader {
  static final String PAGE = """
      SELECT device_id, seq, cycle_id, derived_snapshot FROM device_status_current
      WHERE current_slot = $1 AND device_id > $2 ORDER BY device_id LIMIT $3""";

  /** One device's committed position and derived state. */
  public record DeviceMemory(long seq, long cycleId, JsonObject derived) {}

  /** A slot's loaded state. */
  public record Snapshot(int slot, Map<String, DeviceMemory> devices, long millis) {}

  private final Pool pool;
  private final int page;

  public SnapshotLoader(Pool pool, int page) {
    this.pool = pool;
    this.page = page;
  }

  public Future<Snapshot> load(int slot) {
    long start = System.nanoTime();
    Map<String, DeviceMemory> out = new HashMap<>();
    return next(slot, "", out).map(v -> new Snapshot(slot, out, (System.nanoTime() - start) / 1_000_000));
  }

  private Future<Void> next(int slot, String after, Map<String, DeviceMemory> out) {
    return pool.preparedQuery(PAGE).execute(Tuple.of(slot, after, page)).compose(rows -> {
      String last = null;
      for (Row r : rows) {
        last = r.getString(0);
        Object d = r.getValue(3);
        out.put(last, new DeviceMemory(r.getLong(1), r.getLong(2), d instanceof JsonObject j ? j : null));
      }
      return rows.size() < page ? Future.succeededFuture() : next(slot, last, out);
    });
  }
}
