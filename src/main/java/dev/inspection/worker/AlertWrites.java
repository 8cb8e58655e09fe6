package dev.inspection.worker;

import dev.inspection.state.AlertCurrent;
import dev.inspection.state.AlertEvent;
import dev.inspection.state.AlertFold;
import dev.inspection.state.IsoInstant;
import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The alert part of a batch's transaction ({@link BatchStore}, step 5): the fold's events are inserted (idempotent by their
 * unique key, D4) and {@code alert_current} of every touched (device, alert) is derived again from its recent events, never
 * written on its own.
 */
final class AlertWrites {
  static final String INSERT_EVENTS = """
      INSERT INTO alert_event (device_id, alert_key, event_type, severity, event_time, cycle_id, seq, payload, ingest_writer_epoch)
      SELECT d, k, t, sv, et, cy, s, p::jsonb, ep
      FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::smallint[], $5::timestamptz[], $6::bigint[], $7::bigint[], $8::text[], $9::bigint[])
        AS u(d, k, t, sv, et, cy, s, p, ep)
      ON CONFLICT DO NOTHING""";
  /** Seed 000 §3.3: an alert's fold reads its events of the last 7 days ({@link #READ_EVENTS}, and the cycle floor, {@link #cycleFloor}). */
  static final int EVENT_LOOK_BACK_DAYS = 7;
  /**
   * The recent events of the touched alerts (seed 000 §3.3 bounds the look-back, {@link #EVENT_LOOK_BACK_DAYS}). The table is partitioned by day of
   * cycle_id (90 days kept), and PostgreSQL prunes by constants only: {@code $3}, a cycle_id below every event of the look-back
   * ({@link #EVENT_CYCLE_SLACK_MS}), keeps a batch with alert events to the last days' partitions (with 95 of them the statement
   * was planned in 4.9 ms and ran 1.6 ms; 0.4 and 0.05 with 6).
   */
  static final String READ_EVENTS = """
      SELECT e.event_id, e.device_id, e.alert_key, e.event_type, e.severity, e.event_time, e.cycle_id, e.seq, e.payload
      FROM alert_event e JOIN unnest($1::varchar[], $2::varchar[]) AS k(d, a) ON e.device_id = k.d AND e.alert_key = k.a
      WHERE e.event_time > now() - interval '%d days' AND e.cycle_id > $3""".formatted(EVENT_LOOK_BACK_DAYS);
  /**
   * How much further back than the look-back's days {@link #READ_EVENTS} reads by cycle_id: a result's collected_at (its events' time) lies
   * at most a day after its cycle_id ({@link ResultGuard#MAX_COLLECTED_AFTER_CYCLE_MS}), and a day more for the worker's clock
   * against PostgreSQL's.
   */
  static final long EVENT_CYCLE_SLACK_MS = ResultGuard.MAX_COLLECTED_AFTER_CYCLE_MS + 86_400_000L;
  static final String UPSERT_ALERT = """
      INSERT INTO alert_current (device_id, alert_key, state, severity, first_fired_at, last_event_at, last_event_id, payload)
      SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::smallint[], $5::timestamptz[], $6::timestamptz[], $7::bigint[], $8::text[]::jsonb[])
      ON CONFLICT (device_id, alert_key) DO UPDATE SET state = EXCLUDED.state, severity = EXCLUDED.severity,
        first_fired_at = EXCLUDED.first_fired_at, last_event_at = EXCLUDED.last_event_at, last_event_id = EXCLUDED.last_event_id,
        payload = EXCLUDED.payload""";

  /** {@code cycleFloor}: READ_EVENTS' $3, a cycle_id below every event of the look-back. */
  static Future<Void> write(SqlConnection conn, List<AlertEvent> events, List<Long> epochs, long cycleFloor) {
    if (events.isEmpty()) return Future.succeededFuture();
    int n = events.size();
    String[] dev = new String[n];
    String[] key = new String[n];
    String[] type = new String[n];
    Short[] sev = new Short[n];
    OffsetDateTime[] at = new OffsetDateTime[n];
    Long[] cyc = new Long[n];
    Long[] seq = new Long[n];
    String[] payload = new String[n];
    Long[] ep = new Long[n];
    Map<String, String[]> touched = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      AlertEvent e = events.get(i);
      dev[i] = e.deviceId();
      key[i] = e.alertKey();
      type[i] = e.type();
      sev[i] = (short) e.severity();
      at[i] = IsoInstant.utc(e.eventTime());
      cyc[i] = e.cycleId();
      seq[i] = e.seq();
      payload[i] = e.payload().encode();
      ep[i] = epochs.get(i);
      touched.put(e.deviceId() + "\u0000" + e.alertKey(), new String[] {e.deviceId(), e.alertKey()});
    }
    String[] td = touched.values().stream().map(a -> a[0]).toArray(String[]::new);
    String[] tk = touched.values().stream().map(a -> a[1]).toArray(String[]::new);
    return conn.preparedQuery(INSERT_EVENTS).execute(Tuple.tuple().addArrayOfString(dev).addArrayOfString(key).addArrayOfString(type)
            .addArrayOfShort(sev).addArrayOfOffsetDateTime(at).addArrayOfLong(cyc).addArrayOfLong(seq).addArrayOfString(payload).addArrayOfLong(ep))
        .compose(v -> conn.preparedQuery(READ_EVENTS).execute(Tuple.tuple().addArrayOfString(td).addArrayOfString(tk).addLong(cycleFloor)))
        .compose(rows -> {
          Map<String, List<AlertEvent>> byKey = new LinkedHashMap<>();
          Map<String, Map<AlertEvent.Key, Long>> ids = new HashMap<>();
          for (Row r : rows) {
            AlertEvent e = new AlertEvent(r.getString(1), r.getString(2), r.getString(3), r.getShort(4), r.getOffsetDateTime(5).toInstant(),
                r.getLong(6), r.getLong(7), r.getJsonObject(8));
            String k = e.deviceId() + "\u0000" + e.alertKey();
            byKey.computeIfAbsent(k, x -> new ArrayList<>()).add(e);
            ids.computeIfAbsent(k, x -> new HashMap<>()).put(e.uniqueKey(), r.getLong(0));
          }
          List<AlertCurrent> cur = new ArrayList<>();
          List<Long> lastIds = new ArrayList<>();
          for (Map.Entry<String, List<AlertEvent>> e : byKey.entrySet()) {
            AlertFold.current(e.getValue()).ifPresent(c -> {
              cur.add(c);
              AlertEvent last = e.getValue().stream().max(AlertFold.ORDER).orElseThrow();
              lastIds.add(ids.get(e.getKey()).get(last.uniqueKey()));
            });
          }
          if (cur.isEmpty()) return Future.succeededFuture();
          int m = cur.size();
          String[] cd = new String[m];
          String[] ck = new String[m];
          String[] cs = new String[m];
          Short[] csev = new Short[m];
          OffsetDateTime[] first = new OffsetDateTime[m];
          OffsetDateTime[] last = new OffsetDateTime[m];
          Long[] lid = new Long[m];
          String[] cp = new String[m];
          for (int i = 0; i < m; i++) {
            AlertCurrent c = cur.get(i);
            cd[i] = c.deviceId();
            ck[i] = c.alertKey();
            cs[i] = c.state();
            csev[i] = (short) c.severity();
            first[i] = IsoInstant.utc(c.firstFiredAt());
            last[i] = IsoInstant.utc(c.lastEventAt());
            lid[i] = lastIds.get(i);
            cp[i] = c.payload().encode();
          }
          return conn.preparedQuery(UPSERT_ALERT).execute(Tuple.tuple().addArrayOfString(cd).addArrayOfString(ck).addArrayOfString(cs)
              .addArrayOfShort(csev).addArrayOfOffsetDateTime(first).addArrayOfOffsetDateTime(last).addArrayOfLong(lid).addArrayOfString(cp)).mapEmpty();
        });
  }

  /** READ_EVENTS' cycle floor for a transaction at {@code nowMs}: a cycle_id below every event of the look-back. */
  static long cycleFloor(long nowMs) {
    return nowMs - EVENT_LOOK_BACK_DAYS * 86_400_000L - EVENT_CYCLE_SLACK_MS;
  }

  private AlertWrites() {}
}
