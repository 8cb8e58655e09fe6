package dev.inspection.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.Priority;
import dev.inspection.metrics.Metrics;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Shedding on a real SQLite outbox: the rows that go, what stays, and the ledger that records them. */
class OutboxShedTest extends OutboxFileTest {


  /** n results per device priority, one device each, checked at {@code atMs}, appended oldest first: low, normal, critical. */
  private static List<CheckResult> mixed(int n, long atMs) {
    List<CheckResult> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      for (int p = 3; p >= 1; p--) {
        out.add(new CheckResult("dev-p" + p, 1, p == 1 ? Priority.HIGH : Priority.NORMAL, Instant.ofEpochMilli(atMs + i), 0, 1, 1,
            new JsonObject().put("status", "UP").put("pad", "x".repeat(200)), p));
      }
    }
    return out;
  }

  @Test
  void overTheRowWatermarkLowThenNormalAreShedOldestFirstAndCriticalNever() throws Exception {
    Path file = dir.resolve("shed.db");
    Outbox o = await(Outbox.open(vertx, file, "p1", topology, Clock.systemUTC()));
    List<OutboxRow> rows = await(o.append(mixed(100, 120_000)));
    Metrics metrics = Metrics.prometheus();
    OutboxShed shed = new OutboxShed(o, file);
    // 300 unconfirmed against 100 rows: down to 90 means 210 rows, i.e. all 100 low and 110 of... only 100 normal exist
    OutboxGuard guard = new OutboxGuard(shed, new OutboxCleaner(o, Clock.systemUTC()), metrics, Clock.systemUTC(), new ShedPolicy.Limits(100, 0, 0, 0.9));
    long inFlightLow = rows.get(0).id(); // the oldest low row is out with the broker: it stays
    int n = await(guard.check(300, Set.of(inFlightLow)));
    assertEquals(199, n, "99 low (one in flight) + 100 normal");
    assertEquals(99, metrics.count("probe_outbox_shed_total", "priority", "3"));
    assertEquals(100, metrics.count("probe_outbox_shed_total", "priority", "2"));
    assertEquals(0, metrics.count("probe_outbox_shed_total", "priority", "1"));
    List<OutboxRow> left = await(o.pending(0, Long.MAX_VALUE, Long.MAX_VALUE, 1000));
    assertEquals(101, left.size(), "every critical row and the in-flight low one");
    assertEquals(101, await(o.stats()).depth(), "the kept count of unconfirmed rows follows the shed");
    assertEquals(101L, await(o.countUnconfirmed()));
    assertEquals(inFlightLow, left.get(0).id());
    assertEquals(Map.of(3, 99L, 2, 100L), await(shed.totals()));
    // per device-minute: the checks ran at 120,000..120,099 ms, i.e. minute 120,000
    for (OutboxShed.Entry e : await(shed.ledger())) assertEquals(120_000, e.minuteEpochMs(), e.toString());
    await(o.closeAsync());
    try (var c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT (SELECT count(*) FROM shed_row), (SELECT count(*) FROM outbox), (SELECT count(DISTINCT priority) FROM shed_row)")) {
      rs.next();
      assertEquals(199, rs.getLong(1), "shed rows keep their message ids for the ledger");
      assertEquals(101, rs.getLong(2), "and leave the outbox, so their pages are reused");
      assertEquals(2, rs.getLong(3));
    }
    try (var c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("PRAGMA freelist_count")) {
      rs.next();
      assertTrue(rs.getLong(1) > 0, "whole pages were freed for later appends: " + rs.getLong(1));
    }
  }

  /** n normal results of n devices with 500-byte payloads, checked at {@code atMs}. */
  /**
   * Confirmed rows are kept for the retention's ledger and filled the byte budget of a busy probe: then every result
   * that waited was shed. Over a byte watermark they go first, oldest first, and no unconfirmed result is touched.
   */
  @Test
  void overTheByteWatermarkConfirmedRowsGoFirstAndNoResultIsShed() throws Exception {
    Path file = dir.resolve("kept.db");
    Outbox o = await(Outbox.open(vertx, file, "p1", topology, Clock.systemUTC()));
    List<Long> confirmed = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      List<Long> ids = await(o.append(normal(1_000, 60_000 + i * 1_000L))).stream().map(OutboxRow::id).toList(); // a check round a second
      await(o.markConfirmed(ids)); // as the broker confirms them: the WAL file keeps the size of the largest transaction
      confirmed.addAll(ids);
    }
    List<OutboxRow> waiting = await(o.append(normal(1_000, 120_000)));
    OutboxShed shed = new OutboxShed(o, file);
    ShedPolicy.Usage before = await(shed.usage(1_000));
    long max = before.bytes() / 2; // the 1,000 unconfirmed rows need about a twentieth of it
    Metrics metrics = Metrics.prometheus();
    OutboxGuard guard = new OutboxGuard(shed, new OutboxCleaner(o, Clock.systemUTC(), 1_000), metrics, Clock.systemUTC(), new ShedPolicy.Limits(0, max, 0, 0.9));
    assertEquals(0, await(guard.check(1_000, Set.of())), "no result shed");
    assertEquals(0, metrics.count("probe_outbox_shed_total", "priority", "2"));
    double cut = metrics.count("probe_outbox_retention_cut_total");
    assertTrue(cut >= 1_000 && cut < 20_000, "confirmed rows deleted, a chunk at a time, until under the target: " + cut);
    ShedPolicy.Usage after = await(shed.usage(1_000));
    assertTrue(after.bytes() <= max * 0.9, "the outbox is back under 90 % of " + max + " bytes: " + after.bytes());
    assertEquals(waiting.stream().map(OutboxRow::id).toList(), await(o.pending(0, Long.MAX_VALUE, Long.MAX_VALUE, 2_000)).stream().map(OutboxRow::id).toList(),
        "every unconfirmed row is still there");
    try (var c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT min(id) FROM outbox_confirmed")) {
      rs.next();
      assertEquals(confirmed.get((int) cut), rs.getLong(1), "the oldest confirmed rows went first");
    }
    await(o.closeAsync());
  }

  @Test
  void whenTheConfirmedRowsAreNotEnoughTheyAllGoAndThenResultsAreShed() throws Exception {
    Path file = dir.resolve("short.db");
    Outbox o = await(Outbox.open(vertx, file, "p1", topology, Clock.systemUTC()));
    await(o.markConfirmed(await(o.append(normal(500, 60_000))).stream().map(OutboxRow::id).toList()));
    await(o.append(normal(2_000, 120_000)));
    Metrics metrics = Metrics.prometheus();
    OutboxGuard guard = new OutboxGuard(new OutboxShed(o, file), new OutboxCleaner(o, Clock.systemUTC(), 200), metrics, Clock.systemUTC(),
        new ShedPolicy.Limits(0, 100_000, 0, 0.9));
    assertTrue(await(guard.check(2_000, Set.of())) > 0, "results shed once no confirmed row was left");
    assertEquals(500, metrics.count("probe_outbox_retention_cut_total"), "all 500 confirmed rows, first");
    assertTrue(metrics.count("probe_outbox_shed_total", "priority", "2") > 0);
    await(o.closeAsync());
  }

  @Test
  void belowTheWatermarksNothingIsShedAndTheStorageIsMeasured() throws Exception {
    Path file = dir.resolve("calm.db");
    Outbox o = await(Outbox.open(vertx, file, "p1", topology, Clock.systemUTC()));
    await(o.append(mixed(10, 60_000)));
    Metrics metrics = Metrics.prometheus();
    OutboxGuard guard = new OutboxGuard(new OutboxShed(o, file), new OutboxCleaner(o, Clock.systemUTC()), metrics, Clock.systemUTC(), new ShedPolicy.Limits(1000, 1L << 30, 1, 0.9));
    assertEquals(0, await(guard.check(30, Set.of())));
    assertEquals(30, await(o.pending(0, Long.MAX_VALUE, Long.MAX_VALUE, 1000)).size());
    assertTrue(metrics.scrape().contains("probe_outbox_bytes"), "the gauges are registered");
    await(o.closeAsync());
  }

  @Test
  void aFailedAppendTurnsNotReadyWithTheReasonAndItsResultsAreRecordedAsShedOnceTheOutboxWritesAgain() throws Exception {
    Path file = dir.resolve("failed.db");
    Outbox o = await(Outbox.open(vertx, file, "p1", topology, Clock.systemUTC()));
    OutboxShed shed = new OutboxShed(o, file);
    Metrics metrics = Metrics.prometheus();
    OutboxGuard guard = new OutboxGuard(shed, new OutboxCleaner(o, Clock.systemUTC()), metrics, Clock.systemUTC(), new ShedPolicy.Limits(0, 0, 0, 0.9));
    assertTrue(guard.getAsBoolean());
    guard.appendFailed(mixed(2, 180_000), new java.sql.SQLException("[SQLITE_FULL] database or disk is full"));
    assertFalse(guard.getAsBoolean());
    assertTrue(guard.reason().contains("SQLITE_FULL"), guard.reason());
    assertEquals(6, metrics.count("probe_outbox_append_failures_total"));
    guard.appendSucceeded();
    assertTrue(guard.getAsBoolean());
    // the disk failed, so even the critical ones went: recorded per device-minute, never silently missing
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> await(shed.totals()).equals(Map.of(1, 2L, 2, 2L, 3, 2L)));
    assertEquals(2, metrics.count("probe_outbox_shed_total", "priority", "1"));
    await(o.closeAsync());
  }
}
