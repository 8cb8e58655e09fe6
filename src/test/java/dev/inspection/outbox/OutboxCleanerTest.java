package dev.inspection.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.ManualClock;
import dev.inspection.messaging.Priority;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The outbox cleaner on a real SQLite file: what it deletes, in chunks, and that the outbox's other work goes on between them. */
class OutboxCleanerTest extends OutboxFileTest {
  /** The outbox's clock: the rows' created_at and the cleaner's now. */
  final ManualClock clock = new ManualClock(1_000);

  @Test
  void deletesConfirmedRowsPastTheRetentionInChunksAndKeepsUnconfirmedAndYoungOnes() throws Exception {
    Path file = dir.resolve("clean.db");
    Outbox o = await(Outbox.open(vertx, file, "p1", topology, clock));
    List<OutboxRow> old = await(o.append(results(12)));
    clock.set(5_000);
    List<OutboxRow> young = await(o.append(results(5)));
    List<Long> confirm = new ArrayList<>();
    for (OutboxRow r : old.subList(2, 12)) confirm.add(r.id());
    for (OutboxRow r : young) confirm.add(r.id());
    await(o.markConfirmed(confirm));
    clock.set(6_000);
    // retention 3 s: rows created before 3,000 go, 4 per transaction (4 + 4 + 2)
    assertEquals(10, await(new OutboxCleaner(o, clock, 4).clean(3_000)), "the 10 confirmed rows created at 1,000");
    await(o.closeAsync());
    assertEquals(List.of(old.get(0).id(), old.get(1).id()), ids(file, "id IN (SELECT id FROM outbox_unconfirmed)"), "unconfirmed rows stay, however old");
    assertEquals(young.stream().map(OutboxRow::id).toList(), ids(file, "id IN (SELECT id FROM outbox_confirmed)"), "confirmed rows within the retention stay");
  }

  /**
   * Deleting a minute's rows of a million devices in one transaction held the outbox thread for about 2 s with every
   * append behind it: an append submitted while a clean runs completes before the clean has deleted everything.
   */
  @Test
  void anAppendSubmittedDuringACleanIsNotHeldUntilTheCleanEnds() throws Exception {
    Path file = dir.resolve("interleave.db");
    Outbox o = await(Outbox.open(vertx, file, "p1", topology, clock));
    List<Long> all = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      for (OutboxRow r : await(o.append(results(500)))) all.add(r.id());
    }
    await(o.markConfirmed(all));
    clock.set(10_000);
    List<String> done = new CopyOnWriteArrayList<>();
    Future<Integer> clean = new OutboxCleaner(o, clock, 100).clean(0).onSuccess(n -> done.add("clean"));
    Future<List<OutboxRow>> append = o.append(results(1)).onSuccess(r -> done.add("append"));
    assertEquals(3_000, await(clean), "every confirmed row, in 30 chunks");
    await(append);
    assertEquals(List.of("append", "clean"), done, "the append ran between two chunks");
    await(o.closeAsync());
    assertEquals(1, ids(file, "1 = 1").size(), "only the new row is left");
  }

  /** A clock stepped back breaks "ids grow with the append time": the clean then leaves rows for later, never takes a young one. */
  @Test
  void aClockSteppedBackNeverGetsAYoungRowDeleted() throws Exception {
    Path file = dir.resolve("stepped.db");
    Outbox o = await(Outbox.open(vertx, file, "p1", topology, clock));
    clock.set(5_000);
    List<OutboxRow> late = await(o.append(results(7)));
    clock.set(2_000); // stepped back
    List<OutboxRow> early = await(o.append(results(9)));
    List<Long> all = new ArrayList<>();
    for (OutboxRow r : late) all.add(r.id());
    for (OutboxRow r : early) all.add(r.id());
    await(o.markConfirmed(all));
    clock.set(6_000);
    int first = await(new OutboxCleaner(o, clock, 4).clean(3_000)); // rows appended before 3,000 may go
    assertEquals(late.stream().map(OutboxRow::id).toList(), ids(file, "created_at >= 3000"), "every row appended at 5,000 stays");
    assertEquals(16 - first, ids(file, "1 = 1").size());
    clock.set(9_000);
    assertEquals(16 - first, await(new OutboxCleaner(o, clock, 4).clean(3_000)), "the rest goes once all are past the retention");
    await(o.closeAsync());
    assertEquals(List.of(), ids(file, "1 = 1"));
  }

  /** The cut-off's id by bisection, over ids with gaps (deleted rows) and both ends. */
  @Test
  void theCutOffIsTheFirstIdAppendedAtOrAfterTheTime() throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("bisect.db")); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE outbox (id INTEGER PRIMARY KEY, created_at INTEGER NOT NULL)");
      assertEquals(0, OutboxCleaner.firstIdAppendedAtOrAfter(c, 100), "an empty file: nothing lies below");
      // ids 3, 5, 6, 10, 11, 40 appended at 10, 20, 20, 30, 40, 50
      st.execute("INSERT INTO outbox VALUES (3, 10), (5, 20), (6, 20), (10, 30), (11, 40), (40, 50)");
      for (long at : new long[] {0, 10, 11, 20, 21, 30, 31, 45, 50, 51}) {
        long bound = OutboxCleaner.firstIdAppendedAtOrAfter(c, at);
        List<Long> below = new ArrayList<>();
        List<Long> before = new ArrayList<>();
        try (ResultSet rs = st.executeQuery("SELECT id FROM outbox WHERE id < " + bound + " ORDER BY id")) {
          while (rs.next()) below.add(rs.getLong(1));
        }
        try (ResultSet rs = st.executeQuery("SELECT id FROM outbox WHERE created_at < " + at + " ORDER BY id")) {
          while (rs.next()) before.add(rs.getLong(1));
        }
        assertEquals(before, below, "at " + at + " (bound " + bound + "): the rows below the bound are those appended before it");
      }
    }
  }

  @Test
  void aChunkOfNoRowsIsRefusedWithItsValue() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new OutboxCleaner(null, clock, 0));
    assertTrue(e.getMessage().contains("got 0"), e.getMessage());
  }

  private List<CheckResult> results(int n) {
    List<CheckResult> list = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      list.add(new CheckResult("d" + i, i % 8, Priority.NORMAL, clock.instant(), 1, 1, 1, new JsonObject().put("status", "UP")));
    }
    return list;
  }

  private static List<Long> ids(Path file, String where) throws Exception {
    List<Long> ids = new ArrayList<>();
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
         Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT id FROM outbox WHERE " + where + " ORDER BY id")) {
      while (rs.next()) ids.add(rs.getLong(1));
    }
    return ids;
  }

}
