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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One transaction for the batches of one or more slots (seed 000 §3.1 as corrected by DESIGN.md D1 and D4):
 * <ol>
 *   <li>each slot's lease row is read {@code FOR KEY SHARE}: a slot's rows are written only if this worker
 *       owns it at the epoch it consumes under; an epoch bump ({@code SELECT … FOR UPDATE}) waits for the
 *       transaction, and a transaction after the bump sees the new epoch — so a deposed owner commits
 *       nothing for that slot, not even devices the new owner has never written;</li>
 *   <li>the newest result per device is upserted into {@code device_status_current} in one statement,
 *       guarded by {@code (cycle_id, seq)} so an older message never overwrites a newer one;</li>
 *   <li>every result is appended to {@code device_status_history}; a redelivery hits the key and is ignored.</li>
 * </ol>
 * Rows are sorted by device id so concurrent transactions take row locks in the same order.
 */
public final class BatchStore {
  static final String LEASE_CHECK = """
      SELECT slot_id, owner_worker_id, lease_epoch FROM slot_lease WHERE slot_id = ANY($1::int[]) ORDER BY slot_id FOR KEY SHARE""";

  static final String UPSERT_CURRENT = """
      INSERT INTO device_status_current AS c
        (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id, status_payload, updated_at)
      SELECT d, sl, sl, s, cy, ca, ep, m, p::jsonb, now()
      FROM unnest($1::smallint[], $2::bigint[], $3::varchar[], $4::bigint[], $5::bigint[], $6::timestamptz[], $7::varchar[], $8::text[])
        AS t(sl, ep, d, s, cy, ca, m, p)
      ON CONFLICT (device_id) DO UPDATE SET
        seq = EXCLUDED.seq, cycle_id = EXCLUDED.cycle_id, collected_at = EXCLUDED.collected_at,
        writer_epoch = EXCLUDED.writer_epoch, message_id = EXCLUDED.message_id, slot_id = EXCLUDED.slot_id,
        status_payload = EXCLUDED.status_payload, updated_at = now()
      WHERE (c.cycle_id, c.seq) < (EXCLUDED.cycle_id, EXCLUDED.seq)""";

  static final String INSERT_HISTORY = """
      INSERT INTO device_status_history (device_id, cycle_id, seq, slot_id, collected_at, writer_epoch, message_id, status_payload)
      SELECT d, cy, s, sl, ca, ep, m, p::jsonb
      FROM unnest($1::smallint[], $2::bigint[], $3::varchar[], $4::bigint[], $5::bigint[], $6::timestamptz[], $7::varchar[], $8::text[])
        AS t(sl, ep, d, s, cy, ca, m, p)
      ON CONFLICT DO NOTHING""";

  /** One slot's share of a transaction. */
  public record Part(int slot, long epoch, List<Envelope> batch) {}

  /** Outcome of one slot's batch. */
  public sealed interface Outcome permits Committed, Fenced {}

  /** Committed: rows the whole transaction wrote to current (newer results) and to history (new results). */
  public record Committed(int currentRows, int historyRows) implements Outcome {}

  /** The lease is not ours at this epoch any more: nothing was written for this slot. */
  public record Fenced(String owner, long epoch) implements Outcome {}

  private final Pool pool;
  private final String workerId;

  public BatchStore(Pool pool, String workerId) {
    this.pool = pool;
    this.workerId = workerId;
  }

  public Future<Outcome> commit(int slot, long epoch, List<Envelope> batch) {
    return commit(List.of(new Part(slot, epoch, batch))).map(m -> m.get(slot));
  }

  /** Commits several slots' batches in one transaction; the map holds each slot's outcome. */
  public Future<Map<Integer, Outcome>> commit(List<Part> parts) {
    Integer[] slots = parts.stream().map(Part::slot).distinct().toArray(Integer[]::new);
    return pool.withTransaction(conn -> conn.preparedQuery(LEASE_CHECK).execute(Tuple.of(slots)).compose(rows -> {
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
      return write(conn, valid).map(c -> {
        for (Part p : valid) outcomes.put(p.slot(), c);
        return outcomes;
      });
    }));
  }

  private record Item(int slot, long epoch, Envelope e) {}

  private static Future<Committed> write(SqlConnection conn, List<Part> parts) {
    List<Item> all = new ArrayList<>();
    for (Part p : parts) for (Envelope e : p.batch()) all.add(new Item(p.slot(), p.epoch(), e));
    all.sort(Comparator.comparing((Item i) -> i.e().deviceId()).thenComparingLong(i -> i.e().cycleId()).thenComparingLong(i -> i.e().seq()));
    // one row per device for the upsert: ON CONFLICT cannot touch the same row twice in one statement
    Map<String, Item> newest = new LinkedHashMap<>();
    for (Item i : all) newest.put(i.e().deviceId(), i);
    return conn.preparedQuery(UPSERT_CURRENT).execute(arrays(new ArrayList<>(newest.values())))
        .compose(up -> conn.preparedQuery(INSERT_HISTORY).execute(arrays(all))
            .map(hist -> new Committed(up.rowCount(), hist.rowCount())));
  }

  private static Tuple arrays(List<Item> list) {
    int n = list.size();
    Short[] slot = new Short[n];
    Long[] epoch = new Long[n];
    String[] dev = new String[n];
    Long[] seq = new Long[n];
    Long[] cyc = new Long[n];
    OffsetDateTime[] at = new OffsetDateTime[n];
    String[] mid = new String[n];
    String[] payload = new String[n];
    for (int i = 0; i < n; i++) {
      Item it = list.get(i);
      Envelope e = it.e();
      slot[i] = (short) it.slot();
      epoch[i] = it.epoch();
      dev[i] = e.deviceId();
      seq[i] = e.seq();
      cyc[i] = e.cycleId();
      at[i] = e.collectedAt().atOffset(ZoneOffset.UTC);
      mid[i] = e.messageId();
      payload[i] = e.payload().encode();
    }
    return Tuple.tuple().addArrayOfShort(slot).addArrayOfLong(epoch).addArrayOfString(dev).addArrayOfLong(seq).addArrayOfLong(cyc)
        .addArrayOfOffsetDateTime(at).addArrayOfString(mid).addArrayOfString(payload);
  }
}
