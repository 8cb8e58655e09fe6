package dev.inspection.worker;

import static dev.inspection.it.TestEnv.awaitResult;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.it.TestEnv;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import io.vertx.sqlclient.Tuple;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The history and rollup statements against a real PostgreSQL whose rollup table has a partition per day for two
 * months, as retention.rollup.days keeps it (90 by default): a batch's statements plan and open only the partition of
 * the batch's minutes (PostgreSQL cannot prune by values inside an array, so without the statements' minute bounds
 * every execution planned, locked and initialised a scan of every day), it reads the rows of the batch's keys only (with
 * the bounds, a plain join read every row of the minute: 20,000 here, 150,000 in the capacity bench), and the rollups
 * still count each result once.
 */
class HistoryRollupsIT {
  private static final String ROLLUP_LOCKS = """
      SELECT coalesce(string_agg(DISTINCT c.relname, ','), '') FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
      WHERE l.pid = pg_backend_pid() AND c.relkind = 'r' AND c.relname LIKE 'device_status_rollup_1m_%'""";

  @Test
  void aBatchOpensOnlyItsDaysRollupPartitionAndCountsEachResultOnce() throws Exception {
    try (TestEnv env = new TestEnv(1); AgedSchema db = AgedSchema.open(env)) {
      Pool pool = db.pool();
      assertTrue(env.queryLong("SELECT count(*) FROM pg_partition_tree('$S.device_status_rollup_1m') WHERE isleaf") >= 66);
      Instant minute = thisMinute();
      String day = partition(minute);
      // the rest of a busy fleet's minute: a statement that joined the minute's rows instead of probing the batch's keys reads them all
      env.execute("INSERT INTO $S.device_status_rollup_1m (minute_bucket, device_id, sample_count, down_count, state_changes, last_state)"
          + " SELECT '" + minute + "', 'other-' || g, 1, 0, 0, 'UP' FROM generate_series(1, 20000) g");
      List<HistoryRollups.Item> first = batch(minute, 1, "UP");
      assertEquals(List.of(200, day), write(pool, first, day), "200 history rows; of the rollup partitions only the batch's day's was opened, by key");
      assertEquals(List.of(0, day), write(pool, first, day), "a redelivery: no history row; the rollups' read-back opened only that day's too");
      assertEquals(List.of(200, day), write(pool, batch(minute, 2, "DOWN"), day), "200 new results");
      List<Object[]> rows = env.query("SELECT device_id, sample_count, down_count, state_changes, last_state FROM $S.device_status_rollup_1m"
          + " WHERE device_id NOT LIKE 'other-%' ORDER BY 1");
      assertEquals(200, rows.size());
      for (Object[] r : rows) {
        assertEquals(List.of(2, 1, 1, "DOWN"), List.of(r[1], r[2], r[3], r[4]), r[0] + ": two results counted once each, one change UP -> DOWN");
      }
    }
  }

  /**
   * One device's minute written result by result, as a device checked every few seconds is: a result newer than every one the
   * row counted is added at once (the statement does not compare the row's lists then); a late one, older than the row's last
   * but new, and a batch that repeats a counted result beside a new one go through the lists, and each result counts once.
   */
  @Test
  void aMinuteWrittenResultByResultCountsNewerLateAndRedeliveredResultsOnceEach() throws Exception {
    try (TestEnv env = new TestEnv(1); AgedSchema db = AgedSchema.open(env)) {
      Pool pool = db.pool();
      Instant minute = thisMinute();
      String day = partition(minute);
      write(pool, List.of(item(minute, 100, 10, "UP")), day);
      write(pool, List.of(item(minute, 100, 20, "DOWN")), day); // newer than the row's last
      write(pool, List.of(item(minute, 200, 5, "DOWN")), day); // a later cycle, a lower seq: newer still
      assertEquals(List.of(3, 2, 200L, 5L), rollup(env), "three results, two down, the last one (cycle 200, seq 5)");
      write(pool, List.of(item(minute, 100, 15, "UP")), day); // late: older than the last, not counted yet
      assertEquals(List.of(4, 2, 200L, 5L), rollup(env), "the late result counted; the last one stays");
      write(pool, List.of(item(minute, 200, 5, "DOWN"), item(minute, 200, 9, "UP")), day); // a counted one again, and a new one
      assertEquals(List.of(5, 2, 200L, 9L), rollup(env), "only the new result of the two counted");
      write(pool, List.of(item(minute, 100, 10, "UP"), item(minute, 100, 15, "UP"), item(minute, 200, 9, "UP")), day); // all counted
      assertEquals(List.of(5, 2, 200L, 9L), rollup(env), "a redelivery of counted results changes nothing");
      assertEquals(5L, env.queryLong("SELECT cardinality(seen_seq) FROM $S.device_status_rollup_1m WHERE device_id = 'one'"));
    }
  }

  private static List<Object> rollup(TestEnv env) throws Exception {
    Object[] r = env.query("SELECT sample_count, down_count, last_cycle_id, last_seq FROM $S.device_status_rollup_1m WHERE device_id = 'one'").get(0);
    return List.of(r);
  }

  private static HistoryRollups.Item item(Instant minute, long cycle, long seq, String status) {
    return item("one", minute.plusSeconds(seq % 60), cycle, seq, status);
  }

  /** One result of {@code device}, collected at {@code at}, kept by history. */
  private static HistoryRollups.Item item(String device, Instant at, long cycle, long seq, String status) {
    JsonObject payload = new JsonObject().put("status", status);
    Envelope e = new Envelope(Envelope.messageId("p", cycle, device, seq), device, 0, 1, 1, 1, "p", cycle, seq, at, Priority.NORMAL, payload);
    return new HistoryRollups.Item(0, 1, new StatePlanner.HistoryRow(e, payload, 2, true));
  }

  /** The current minute, or today's first if midnight passed since (the aged schema's partitions are around today). */
  private static Instant thisMinute() {
    LocalDate today = LocalDate.now(ZoneOffset.UTC);
    Instant minute = Instant.now().truncatedTo(ChronoUnit.MINUTES);
    return minute.atZone(ZoneOffset.UTC).toLocalDate().equals(today) ? minute : today.atStartOfDay(ZoneOffset.UTC).toInstant();
  }

  /** The rollup day partition that holds {@code minute}. */
  private static String partition(Instant minute) {
    return "device_status_rollup_1m_" + minute.atZone(ZoneOffset.UTC).toLocalDate().toString().replace("-", "");
  }

  /**
   * Writes {@code items} in one transaction; the history rows inserted and the rollup partitions (tables) the transaction had
   * locked before committing. Fails when the transaction read more than a few rows of {@code day}'s partition: one probe per key.
   */
  private static List<Object> write(Pool pool, List<HistoryRollups.Item> items, String day) throws Exception {
    SqlConnection conn = awaitResult(pool.getConnection());
    try {
      Transaction tx = awaitResult(conn.begin());
      int history = awaitResult(HistoryRollups.write(conn, items, JsonObject::toBuffer));
      String locked = awaitResult(conn.query(ROLLUP_LOCKS).execute()).iterator().next().getString(0);
      long read = awaitResult(conn.preparedQuery("SELECT pg_stat_get_xact_tuples_returned(c.oid) + pg_stat_get_xact_tuples_fetched(c.oid) FROM pg_class c"
          + " WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace").execute(Tuple.of(day))).iterator().next().getLong(0);
      assertTrue(read <= 4L * items.size(), "rows of the day's rollup partition read for a batch of " + items.size() + ": " + read);
      awaitResult(tx.commit());
      return List.of(history, locked);
    } finally {
      conn.close();
    }
  }

  private static List<HistoryRollups.Item> batch(Instant minute, long cycle, String status) {
    List<HistoryRollups.Item> items = new ArrayList<>();
    for (int i = 0; i < 200; i++) items.add(item("d" + i, minute.plusSeconds(cycle), cycle, 0, status));
    return items;
  }
}
