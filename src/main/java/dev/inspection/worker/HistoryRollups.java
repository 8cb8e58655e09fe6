package dev.inspection.worker;

import dev.inspection.state.IsoInstant;
import dev.inspection.state.RollupFold;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * History and the per-minute rollups of a batch, inside its transaction. History takes the results its policy
 * keeps; a redelivered one hits the key and is ignored (D4). The rollups take every result exactly once: each
 * rollup row lists the (cycle_id, seq) of the results it counted ({@link RollupFold}), so they do not depend on
 * what history keeps, and no window function is needed (the batch's per-minute figures are folded in memory).
 *
 * <p>One statement does both in the common case: it parses each payload once, inserts history and adds the
 * batch's figures to the rollup rows, skipping a row that already counted one of the batch's results. When a row
 * was skipped (a redelivery, a replay), the rows of the batch are read back and folded again result by result,
 * which counts only what is new. Only the owner of a device's slot writes its rollups (the lease check of the
 * same transaction), so nobody changes the rows between that read and the write.
 */
final class HistoryRollups {
  /** {@link #write}'s statement with history's insert-or-ignore: redeliveries, replays and back-fills may bring rows history holds. */
  static final String WRITE = statement("ON CONFLICT DO NOTHING");
  /**
   * The same with a plain insert into history, for a batch that should hold only new results: it fails with a unique violation
   * (23505, {@link DbErrors#isFreshDuplicate}) when one is not, and its caller writes the batch again with {@link #WRITE}. An
   * insert-or-ignore looks a key up before it inserts it and the insert looks it up again, under a speculative-insertion lock; the
   * plain insert looks once. The commit bench (300 batches of 200, two runs each, alternating): PostgreSQL's CPU per result,
   * full / plain, 1.81 and 1.79 with the insert-or-ignore, 1.68 and 1.68 with the plain insert.
   */
  static final String WRITE_FRESH = statement("");
  /*
   * Both statements insert a rollup row the planner knows to be new (HistoryRow#newMinute; $26, only when writing fresh) with a plain
   * insert, and add the rest to their rows with the upsert. A device inspected once a minute makes a new row with every result: the
   * upsert looked its key up, inserted under a speculative-insertion lock, looked again and confirmed, where the plain insert looks
   * once (pgbench, 700 new rows a transaction, alternating, 3 rounds: 6.6-9.2 ms against 4.1-7.4 of wall time; the commit bench with a
   * device's results minutes apart, about two thirds of the rows new: PostgreSQL's CPU full / plain 1.60-1.61 against 1.64-1.65, about
   * 1 µs of the 37-39 a result). A row that exists after all (a slot's earlier owner wrote it; a producer whose cycle_id is not
   * after its collected_at) fails the statement on the rollup key (23505, DbErrors#isFreshDuplicate), and the batch is written
   * again with every row upserted.
   */

  private static String statement(String historyConflict) {
    return """
      WITH t AS (
        SELECT sl, ep, d, s, cy, ca, m, convert_from(pb, 'UTF8')::jsonb AS p, rc, keep, i
        FROM unnest($1::smallint[], $2::bigint[], $3::varchar[], $4::bigint[], $5::bigint[], $6::timestamptz[], $7::varchar[],
                    $8::bytea[], $9::smallint[], $10::bool[])
          WITH ORDINALITY AS u(sl, ep, d, s, cy, ca, m, pb, rc, keep, i)),
      ins AS (
        INSERT INTO device_status_history (device_id, cycle_id, seq, retention_class, slot_id, collected_at, writer_epoch, message_id, status_payload,
                                           received_at)
        SELECT d, cy, s, rc, sl, ca, ep, m, p, coalesce($23::timestamptz, now()) FROM t WHERE keep
        %s
        RETURNING 1),
      a AS (
        SELECT * FROM unnest($11::timestamptz[], $12::varchar[], $13::int[], $14::int[], $15::int[], $16::varchar[], $17::varchar[], $18::bigint[],
                             $19::bigint[], $20::bigint[], $21::text[], $22::text[], $26::bool[])
          AS a(m, d, n, dn, ch, fs, ls, li, lc, lq, sc, sq, fr)),
      fresh AS (
        INSERT INTO device_status_rollup_1m
          (minute_bucket, device_id, sample_count, down_count, state_changes, last_state, last_payload, last_cycle_id, last_seq, seen_cycle, seen_seq)
        SELECT a.m, a.d, a.n, a.dn, a.ch, a.ls, lt.p, a.lc, a.lq, a.sc::bigint[], a.sq::bigint[]
        FROM a JOIN t lt ON lt.i = a.li WHERE a.fr
        RETURNING 1),
      roll AS (
        INSERT INTO device_status_rollup_1m AS r
          (minute_bucket, device_id, sample_count, down_count, state_changes, last_state, last_payload, last_cycle_id, last_seq, seen_cycle, seen_seq)
        SELECT a.m, a.d, a.n, a.dn, a.ch + CASE WHEN x.last_state IS NOT NULL AND x.last_state IS DISTINCT FROM a.fs THEN 1 ELSE 0 END,
               a.ls, lt.p, a.lc, a.lq, a.sc::bigint[], a.sq::bigint[]
        FROM a JOIN t lt ON lt.i = a.li
          -- a row of several results: its stored state, one index probe (LIMIT 1 keeps PostgreSQL from turning it into a join that reads
          -- every row of the minutes); bounded by the batch's first and last minute, so only their day partitions are planned, locked and
          -- opened. A row of one result (nearly all: a device is seldom twice in a batch's minute) needs no probe: its first state is its
          -- last, and the DO UPDATE compares it with the stored one
          LEFT JOIN LATERAL (SELECT x.last_state FROM device_status_rollup_1m x WHERE a.n > 1 AND x.minute_bucket = a.m AND x.device_id = a.d
                               AND x.minute_bucket BETWEEN $24::timestamptz AND $25::timestamptz LIMIT 1) x ON true
        WHERE NOT a.fr
        ON CONFLICT (minute_bucket, device_id) DO UPDATE SET
          sample_count = r.sample_count + EXCLUDED.sample_count,
          down_count = r.down_count + EXCLUDED.down_count,
          state_changes = r.state_changes + EXCLUDED.state_changes
            + CASE WHEN EXCLUDED.sample_count = 1 AND r.last_state IS NOT NULL AND r.last_state IS DISTINCT FROM EXCLUDED.last_state THEN 1 ELSE 0 END,
          last_state = CASE WHEN r.last_cycle_id IS NULL OR (EXCLUDED.last_cycle_id, EXCLUDED.last_seq) > (r.last_cycle_id, r.last_seq)
                            THEN EXCLUDED.last_state ELSE r.last_state END,
          last_payload = CASE WHEN r.last_cycle_id IS NULL OR (EXCLUDED.last_cycle_id, EXCLUDED.last_seq) > (r.last_cycle_id, r.last_seq)
                              THEN EXCLUDED.last_payload ELSE r.last_payload END,
          last_seq = CASE WHEN r.last_cycle_id IS NULL OR (EXCLUDED.last_cycle_id, EXCLUDED.last_seq) > (r.last_cycle_id, r.last_seq)
                          THEN EXCLUDED.last_seq ELSE r.last_seq END,
          last_cycle_id = CASE WHEN r.last_cycle_id IS NULL OR (EXCLUDED.last_cycle_id, EXCLUDED.last_seq) > (r.last_cycle_id, r.last_seq)
                               THEN EXCLUDED.last_cycle_id ELSE r.last_cycle_id END,
          seen_cycle = r.seen_cycle || EXCLUDED.seen_cycle,
          seen_seq = r.seen_seq || EXCLUDED.seen_seq
        -- counts none of the batch's results yet: at once when the oldest of them (the first of its seen list, RollupFold
        -- sorts them) lies after the row's last one, the newest it counted; else by the lists (a redelivery, a late result)
        WHERE CASE WHEN (EXCLUDED.seen_cycle[1], EXCLUDED.seen_seq[1]) > (r.last_cycle_id, r.last_seq) THEN true
                   ELSE NOT EXISTS (SELECT 1 FROM unnest(r.seen_cycle, r.seen_seq) AS o(c, s)
                                    JOIN unnest(EXCLUDED.seen_cycle, EXCLUDED.seen_seq) AS n(c, s) ON o.c = n.c AND o.s = n.s) END
        RETURNING 1)
      SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM roll) + (SELECT count(*) FROM fresh)""".formatted(historyConflict);
  }

  static final String READ = """
      SELECT r.minute_bucket, r.device_id, r.sample_count, r.down_count, r.state_changes, r.last_state, r.last_cycle_id, r.last_seq,
             r.seen_cycle, r.seen_seq
      FROM unnest($1::timestamptz[], $2::varchar[]) AS k(m, d)
        CROSS JOIN LATERAL (  -- as in WRITE: one probe per key, bounded by the minutes
          SELECT minute_bucket, device_id, sample_count, down_count, state_changes, last_state, last_cycle_id, last_seq, seen_cycle, seen_seq
          FROM device_status_rollup_1m WHERE minute_bucket = k.m AND device_id = k.d AND minute_bucket BETWEEN $3::timestamptz AND $4::timestamptz
          LIMIT 1) r""";

  /** Absolute values from a fold against the stored rows; a row whose last_cycle_id is null keeps its stored last state, payload and position. */
  static final String SET = """
      INSERT INTO device_status_rollup_1m AS r
        (minute_bucket, device_id, sample_count, down_count, state_changes, last_state, last_payload, last_cycle_id, last_seq, seen_cycle, seen_seq)
      SELECT m, d, n, dn, ch, ls, convert_from(lp, 'UTF8')::jsonb, lc, lq, sc::bigint[], sq::bigint[]
      FROM unnest($1::timestamptz[], $2::varchar[], $3::int[], $4::int[], $5::int[], $6::varchar[], $7::varchar[], $8::bytea[], $9::bigint[],
                  $10::bigint[], $11::text[], $12::text[]) AS t(m, d, n, dn, ch, fs, ls, lp, lc, lq, sc, sq)
      ON CONFLICT (minute_bucket, device_id) DO UPDATE SET
        sample_count = EXCLUDED.sample_count, down_count = EXCLUDED.down_count, state_changes = EXCLUDED.state_changes,
        last_state = CASE WHEN EXCLUDED.last_cycle_id IS NULL THEN r.last_state ELSE EXCLUDED.last_state END,
        last_payload = CASE WHEN EXCLUDED.last_cycle_id IS NULL THEN r.last_payload ELSE EXCLUDED.last_payload END,
        last_seq = CASE WHEN EXCLUDED.last_cycle_id IS NULL THEN r.last_seq ELSE EXCLUDED.last_seq END,
        last_cycle_id = coalesce(EXCLUDED.last_cycle_id, r.last_cycle_id),
        seen_cycle = EXCLUDED.seen_cycle, seen_seq = EXCLUDED.seen_seq""";

  /** A result and the slot and epoch it is written under. */
  record Item(int slot, long epoch, StatePlanner.HistoryRow row) {}

  private HistoryRollups() {}

  /**
   * Writes history and rollups for {@code items} (sorted by device, cycle_id, seq); {@code encode} turns a payload
   * into its JSON's UTF-8 bytes (shared with the other statements). The future holds the history rows really inserted.
   */
  static Future<Integer> write(SqlConnection conn, List<Item> items, Function<JsonObject, Buffer> encode) {
    return write(conn, items, encode, null, false);
  }

  /**
   * As above; {@code receivedAt} is the history rows' received_at (the back-fill: when their batch committed), null = now();
   * {@code fresh}: history gets a plain insert ({@link #WRITE_FRESH}), which fails the transaction if it holds one of the results,
   * and so do the rollup rows all of whose results the planner saw as the first of their minute ({@link StatePlanner.HistoryRow#newMinute}).
   */
  static Future<Integer> write(SqlConnection conn, List<Item> items, Function<JsonObject, Buffer> encode, OffsetDateTime receivedAt, boolean fresh) {
    if (items.isEmpty()) return Future.succeededFuture(0);
    List<RollupFold.Sample> samples = new ArrayList<>(items.size());
    List<BatchStore.ResultRow> rows = new ArrayList<>(items.size());
    Boolean[] keep = new Boolean[items.size()];
    Short[] rc = new Short[items.size()];
    Map<JsonObject, Long> index = new IdentityHashMap<>(items.size());
    // writing fresh, the (minute, device) rows that may exist already: any of their results not the first of its minute
    Set<RollupFold.Key> existing = new HashSet<>();
    for (int i = 0; i < items.size(); i++) {
      Item it = items.get(i);
      samples.add(it.row().sample());
      if (fresh && !it.row().newMinute()) existing.add(samples.get(i).key());
      rows.add(new BatchStore.ResultRow(it.slot(), it.epoch(), it.row().envelope(), it.row().payload()));
      keep[i] = it.row().keep();
      rc[i] = (short) it.row().retentionClass();
      index.put(it.row().payload(), i + 1L); // WITH ORDINALITY counts from 1
    }
    // the batch's own figures per (minute, device); the statement adds them to rows that counted none of these results
    List<RollupFold.Row> figures = RollupFold.fold(Map.of(), samples);
    Tuple args = BatchStore.resultColumns(rows, encode).addArrayOfShort(rc).addArrayOfBoolean(keep);
    figures(args, figures, (t, rs) -> t.addArrayOfLong(rs.stream().map(x -> index.get(x.lastPayload())).toArray(Long[]::new)));
    args.addOffsetDateTime(receivedAt);
    bounds(args, figures.stream().map(x -> x.key().minute()).toList());
    args.addArrayOfBoolean(figures.stream().map(x -> fresh && !existing.contains(x.key())).toArray(Boolean[]::new));
    return conn.preparedQuery(fresh ? WRITE_FRESH : WRITE).execute(args).compose(rs -> {
      Row r = rs.iterator().next();
      int history = r.getLong(0).intValue();
      if (r.getLong(1) == figures.size()) return Future.succeededFuture(history);
      return refold(conn, samples, encode).map(history); // some row had counted a result of this batch already
    });
  }

  /**
   * The rollup rows as the statements' twelve columns (minute, device, samples, down, changes, first state, last
   * state, the last payload's column, last cycle, last seq, seen cycles, seen seqs), added to {@code args};
   * {@code lastPayload} adds the eighth: WRITE's ordinality of the payload, SET's payload bytes.
   */
  private static Tuple figures(Tuple args, List<RollupFold.Row> rows, BiConsumer<Tuple, List<RollupFold.Row>> lastPayload) {
    int n = rows.size();
    OffsetDateTime[] m = new OffsetDateTime[n];
    String[] d = new String[n];
    Integer[] samples = new Integer[n];
    Integer[] down = new Integer[n];
    Integer[] changes = new Integer[n];
    String[] first = new String[n];
    String[] last = new String[n];
    Long[] cycle = new Long[n];
    Long[] seq = new Long[n];
    String[] seenCycle = new String[n];
    String[] seenSeq = new String[n];
    for (int i = 0; i < n; i++) {
      RollupFold.Row r = rows.get(i);
      m[i] = IsoInstant.utc(r.key().minute());
      d[i] = r.key().deviceId();
      samples[i] = r.samples();
      down[i] = r.down();
      changes[i] = r.changes();
      first[i] = r.firstState();
      last[i] = r.lastState();
      cycle[i] = r.lastCycle();
      seq[i] = r.lastSeq();
      seenCycle[i] = literal(r.seenCycle());
      seenSeq[i] = literal(r.seenSeq());
    }
    args.addArrayOfOffsetDateTime(m).addArrayOfString(d).addArrayOfInteger(samples).addArrayOfInteger(down).addArrayOfInteger(changes)
        .addArrayOfString(first).addArrayOfString(last);
    lastPayload.accept(args, rows);
    return args.addArrayOfLong(cycle).addArrayOfLong(seq).addArrayOfString(seenCycle).addArrayOfString(seenSeq);
  }

  /** Reads the batch's rollup rows back and folds the batch in result by result: only what they have not counted is added. */
  static Future<Integer> refold(SqlConnection conn, List<RollupFold.Sample> samples, Function<JsonObject, Buffer> encode) {
    if (samples.isEmpty()) return Future.succeededFuture(0);
    Set<RollupFold.Key> keys = new LinkedHashSet<>();
    for (RollupFold.Sample s : samples) keys.add(s.key());
    List<RollupFold.Key> sorted = new ArrayList<>(keys);
    sorted.sort(Comparator.comparing(RollupFold.Key::deviceId).thenComparing(RollupFold.Key::minute));
    OffsetDateTime[] m = new OffsetDateTime[sorted.size()];
    String[] d = new String[sorted.size()];
    for (int i = 0; i < m.length; i++) {
      m[i] = IsoInstant.utc(sorted.get(i).minute());
      d[i] = sorted.get(i).deviceId();
    }
    Tuple read = bounds(Tuple.tuple().addArrayOfOffsetDateTime(m).addArrayOfString(d), sorted.stream().map(RollupFold.Key::minute).toList());
    return conn.preparedQuery(READ).execute(read).compose(rows -> {
      Map<RollupFold.Key, RollupFold.Stored> stored = new HashMap<>();
      for (Row r : rows) {
        stored.put(new RollupFold.Key(r.getOffsetDateTime(0).toInstant(), r.getString(1)), new RollupFold.Stored(r.getInteger(2), r.getInteger(3),
            r.getInteger(4), r.getString(5), r.getLong(6), r.getLong(7), longs(r.getArrayOfLongs(8)), longs(r.getArrayOfLongs(9))));
      }
      List<RollupFold.Row> out = RollupFold.fold(stored, samples);
      out.sort(Comparator.comparing((RollupFold.Row x) -> x.key().deviceId()).thenComparing(x -> x.key().minute()));
      return out.isEmpty() ? Future.succeededFuture(0) : conn.preparedQuery(SET).execute(figures(Tuple.tuple(), out,
          (t, rs) -> t.addArrayOfBuffer(rs.stream().map(x -> x.takesLast() ? encode.apply(x.lastPayload()) : null).toArray(Buffer[]::new)))).map(r -> r.rowCount());
    });
  }

  /**
   * The first and the last of {@code minutes}, added to {@code args}: the statements read rollup rows only between them. The
   * table has a partition per day (90 days by default, retention.rollup.days); PostgreSQL cannot prune by the values inside an
   * array, so without these bounds every statement planned and probed every day's partition (a one-result batch with 96
   * partitions: planned in 3.85 ms and run in 4.51 ms, against 0.45 and 0.20 with the bounds; scripts/bench/rollup-partitions.sh).
   */
  private static Tuple bounds(Tuple args, List<Instant> minutes) {
    Instant lo = minutes.get(0);
    Instant hi = lo;
    for (Instant m : minutes) {
      if (m.isBefore(lo)) lo = m;
      if (m.isAfter(hi)) hi = m;
    }
    return args.addOffsetDateTime(IsoInstant.utc(lo)).addOffsetDateTime(IsoInstant.utc(hi));
  }

  private static long[] longs(Long[] a) {
    if (a == null) return null;
    long[] out = new long[a.length];
    for (int i = 0; i < a.length; i++) out[i] = a[i];
    return out;
  }

  /** A bigint[] as PostgreSQL's array text ({@code {1,2,3}}); one array per row cannot ride unnest() as a 2-D array. */
  private static String literal(long[] a) {
    StringBuilder sb = new StringBuilder(a.length * 14 + 2).append('{');
    for (int i = 0; i < a.length; i++) {
      if (i > 0) sb.append(',');
      sb.append(a[i]);
    }
    return sb.append('}').toString();
  }
}
