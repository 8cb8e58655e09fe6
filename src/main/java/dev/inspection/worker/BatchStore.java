package dev.inspection.worker;

import dev.inspection.messaging.Envelope;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One transaction per batch (seed 000 §3.1 as corrected by DESIGN.md D1 and D4):
 * <ol>
 *   <li>the slot's lease row is read {@code FOR KEY SHARE}: the batch goes on only if this worker owns the
 *       slot at the epoch it consumes under; an epoch bump ({@code SELECT … FOR UPDATE}) waits for the batch,
 *       and a batch after the bump sees the new epoch and rolls back — so a deposed owner commits nothing,
 *       not even devices the new owner has never written;</li>
 *   <li>the newest result per device is upserted into {@code device_status_current} in one statement,
 *       guarded by {@code (cycle_id, seq)} so an older message never overwrites a newer one;</li>
 *   <li>every result is appended to {@code device_status_history}; a redelivery hits the key and is ignored.</li>
 * </ol>
 * Rows are sorted by device id so concurrent batches take row locks in the same order.
 */
public final class BatchStore {
  static final String LEASE_CHECK = "SELECT owner_worker_id, lease_epoch FROM slot_lease WHERE slot_id = $1::int FOR KEY SHARE";

  static final String UPSERT_CURRENT = """
      INSERT INTO device_status_current AS c
        (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id, status_payload, updated_at)
      SELECT d, $1::smallint, $1::smallint, s, cy, ca, $2::bigint, m, p::jsonb, now()
      FROM unnest($3::varchar[], $4::bigint[], $5::bigint[], $6::timestamptz[], $7::varchar[], $8::text[]) AS t(d, s, cy, ca, m, p)
      ON CONFLICT (device_id) DO UPDATE SET
        seq = EXCLUDED.seq, cycle_id = EXCLUDED.cycle_id, collected_at = EXCLUDED.collected_at,
        writer_epoch = EXCLUDED.writer_epoch, message_id = EXCLUDED.message_id, slot_id = EXCLUDED.slot_id,
        status_payload = EXCLUDED.status_payload, updated_at = now()
      WHERE (c.cycle_id, c.seq) < (EXCLUDED.cycle_id, EXCLUDED.seq)""";

  static final String INSERT_HISTORY = """
      INSERT INTO device_status_history (device_id, cycle_id, seq, slot_id, collected_at, writer_epoch, message_id, status_payload)
      SELECT d, cy, s, $1::smallint, ca, $2::bigint, m, p::jsonb
      FROM unnest($3::varchar[], $4::bigint[], $5::bigint[], $6::timestamptz[], $7::varchar[], $8::text[]) AS t(d, s, cy, ca, m, p)
      ON CONFLICT DO NOTHING""";

  /** Outcome of one batch. */
  public sealed interface Outcome permits Committed, Fenced {}

  /** Committed: rows written to current (newer results) and to history (new results). */
  public record Committed(int currentRows, int historyRows) implements Outcome {}

  /** The lease is not ours at this epoch any more: nothing was written. */
  public record Fenced(String owner, long epoch) implements Outcome {}

  private final Pool pool;

  public BatchStore(Pool pool) {
    this.pool = pool;
  }

  public Future<Outcome> commit(int slot, String workerId, long epoch, List<Envelope> batch) {
    List<Envelope> sorted = new ArrayList<>(batch);
    sorted.sort(Comparator.comparing(Envelope::deviceId).thenComparingLong(Envelope::cycleId).thenComparingLong(Envelope::seq));
    // one row per device for the upsert: ON CONFLICT cannot touch the same row twice in one statement
    Map<String, Envelope> newest = new LinkedHashMap<>();
    for (Envelope e : sorted) newest.put(e.deviceId(), e);
    return pool.withTransaction(conn -> conn.preparedQuery(LEASE_CHECK).execute(Tuple.of(slot)).compose(rows -> {
      if (rows.size() == 0) return Future.succeededFuture(new Fenced(null, -1));
      Row r = rows.iterator().next();
      String owner = r.getString(0);
      long current = r.getLong(1);
      if (!workerId.equals(owner) || current != epoch) return Future.succeededFuture(new Fenced(owner, current));
      return write(conn, slot, epoch, new ArrayList<>(newest.values()), sorted);
    }));
  }

  private static Future<Outcome> write(SqlConnection conn, int slot, long epoch, List<Envelope> current, List<Envelope> all) {
    return conn.preparedQuery(UPSERT_CURRENT).execute(arrays(slot, epoch, current))
        .compose(up -> conn.preparedQuery(INSERT_HISTORY).execute(arrays(slot, epoch, all))
            .map(hist -> (Outcome) new Committed(up.rowCount(), hist.rowCount())));
  }

  private static Tuple arrays(int slot, long epoch, List<Envelope> list) {
    int n = list.size();
    String[] dev = new String[n];
    Long[] seq = new Long[n];
    Long[] cyc = new Long[n];
    OffsetDateTime[] at = new OffsetDateTime[n];
    String[] mid = new String[n];
    String[] payload = new String[n];
    for (int i = 0; i < n; i++) {
      Envelope e = list.get(i);
      dev[i] = e.deviceId();
      seq[i] = e.seq();
      cyc[i] = e.cycleId();
      at[i] = e.collectedAt().atOffset(ZoneOffset.UTC);
      mid[i] = e.messageId();
      payload[i] = e.payload().encode();
    }
    return Tuple.of(slot, epoch, dev, seq, cyc, at).addArrayOfString(mid).addArrayOfString(payload);
  }
}
