package dev.inspection.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The SQLite outbox on a real file (no service needed). */
class OutboxTest extends OutboxFileTest {

  /** The outbox of probe p1 in {@code file}, on the system clock. */
  private Outbox open(Path file) throws Exception {
    return await(Outbox.open(vertx, file, "p1", topology, Clock.systemUTC()));
  }


  private static List<CheckResult> results(long atMs, String... devices) {
    List<CheckResult> out = new ArrayList<>();
    for (String d : devices) {
      out.add(new CheckResult(d, 1, Priority.NORMAL, Instant.ofEpochMilli(atMs), 0, 1, 1, new JsonObject().put("status", "UP")));
    }
    return out;
  }

  @Test
  void appendsCommitWithFullDurabilityAlsoAfterConfirmMarksThatDoNot() throws Exception {
    Outbox o = open(dir.resolve("sync.db"));
    assertEquals(2, await(o.synchronousLevel()), "FULL from the start");
    List<OutboxRow> rows = await(o.append(results(5_000, "a", "b")));
    assertEquals(2, await(o.markConfirmed(rows.stream().map(OutboxRow::id).toList())));
    assertEquals(2, await(o.synchronousLevel()), "FULL again after a confirm mark");
    assertEquals(List.of(), await(o.pending(0, Long.MAX_VALUE, Long.MAX_VALUE, 10)), "the marks hold");
    await(o.closeAsync());
  }

  @Test
  void aCloseWaitsForEveryCallAskedBeforeItAndRefusesEveryCallAfter() throws Exception {
    Outbox o = open(dir.resolve("close.db"));
    List<Future<List<OutboxRow>>> before = new ArrayList<>();
    // asked from several contexts (a test thread gets a new one each time), as the probe's timers and confirms do
    for (int i = 0; i < 20; i++) before.add(o.append(results(5_000 + i, "d" + i)));
    Future<Void> closed = o.closeAsync();
    Future<List<OutboxRow>> after = o.append(results(9_000, "late"));
    await(closed);
    for (Future<List<OutboxRow>> f : before) assertEquals(1, await(f).size(), "a call asked before the close completed");
    Exception refused = assertThrows(Exception.class, () -> await(after));
    assertTrue(String.valueOf(refused.getCause()).contains("the outbox is closed"), String.valueOf(refused.getCause()));
    Outbox again = open(dir.resolve("close.db"));
    assertEquals(20, await(again.pending(0, Long.MAX_VALUE, Long.MAX_VALUE, 100)).size(), "all 20 rows are in the file, the late one is not");
    await(again.closeAsync());
  }

  @Test
  void rowIdsKeepGrowingAfterEveryRowWasConfirmedDeletedAndTheProbeRestarted() throws Exception {
    Path file = dir.resolve("ids.db");
    Outbox o = open(file);
    List<OutboxRow> first = await(o.append(results(5_000, "a", "b", "c")));
    assertEquals(List.of(first.get(0).id(), first.get(0).id() + 1, first.get(0).id() + 2), first.stream().map(OutboxRow::id).toList());
    await(o.markConfirmed(first.stream().map(OutboxRow::id).toList()));
    assertEquals(3, await(new OutboxCleaner(o, Clock.systemUTC()).clean(-60_000)), "every confirmed row deleted");
    await(o.closeAsync());
    Outbox again = open(file);
    List<OutboxRow> second = await(again.append(results(6_000, "a")));
    assertTrue(second.get(0).id() > first.get(2).id(), "an id is never handed out twice: " + second.get(0).id());
    assertEquals(List.of(second.get(0).id()), await(again.pending(0, Long.MAX_VALUE, Long.MAX_VALUE, 10)).stream().map(OutboxRow::id).toList(),
        "the id given is the id stored");
    await(again.closeAsync());
  }

  @Test
  void sequenceAndCycleContinueAboveEverythingHandedOutBeforeARestart() throws Exception {
    Path file = dir.resolve("o.db");
    Outbox o = open(file);
    List<OutboxRow> first = await(o.append(results(5_000, "a", "a", "b")));
    long a1 = seq(first.get(0));
    long a2 = seq(first.get(1));
    assertTrue(a2 > a1, "a device's seq grows within one append: " + a1 + ", " + a2);
    assertEquals(first.get(2).id(), seq(first.get(2)), "the seq is the row id");
    await(o.markConfirmed(first.stream().map(OutboxRow::id).toList()));
    assertEquals(3, await(new OutboxCleaner(o, Clock.systemUTC()).clean(-60_000)), "confirmed rows removed: the file no longer lists the numbers it gave");
    await(o.closeAsync());
    // the clock went back: cycle ids must still not go below the high-water mark
    Outbox again = await(Outbox.open(vertx, file, "p1", topology, Clock.fixed(Instant.ofEpochMilli(1_000), ZoneOffset.UTC)));
    List<OutboxRow> second = await(again.append(results(1_000, "a", "b")));
    Envelope a3 = Envelope.parse(second.get(0).body(), 1 << 20);
    Envelope b2 = Envelope.parse(second.get(1).body(), 1 << 20);
    assertTrue(a3.seq() > a2, "a's seq " + a3.seq() + " is above its last one before the restart (" + a2 + ")");
    assertTrue(b2.seq() > seq(first.get(2)), "b's seq " + b2.seq() + " is above its last one before the restart");
    assertTrue(a3.cycleId() >= 5_000, "cycle id " + a3.cycleId() + " fell below the high-water mark");
    assertEquals("p1:" + a3.cycleId() + ":a:" + a3.seq(), a3.messageId());
    await(again.closeAsync());
  }

  /**
   * An outbox written before issue 11 numbered each device from 1 and kept the counters in device_seq. After the
   * switch to row ids every device's next seq is still above its old one, also for a device whose rows are gone.
   */
  @Test
  void anOldFileWithPerDeviceCountersGoesOnAboveThem() throws Exception {
    Path file = dir.resolve("old.db");
    Outbox o = open(file);
    // 40 results of device a, 1 of b, as the old numbering would have counted them (a: 1..40, b: 1)
    List<CheckResult> many = new ArrayList<>();
    for (int i = 0; i < 40; i++) many.addAll(results(5_000 + i, "a"));
    many.addAll(results(6_000, "b"));
    List<OutboxRow> rows = await(o.append(many));
    await(o.markConfirmed(rows.stream().map(OutboxRow::id).toList()));
    await(new OutboxCleaner(o, Clock.systemUTC()).clean(-60_000));
    await(o.closeAsync());
    try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
         java.sql.Statement st = c.createStatement()) {
      st.execute("CREATE TABLE device_seq (device_id TEXT PRIMARY KEY, seq INTEGER NOT NULL)");
      st.execute("INSERT INTO device_seq VALUES ('a', 40), ('b', 1)");
    }
    Outbox again = open(file);
    List<OutboxRow> next = await(again.append(results(7_000, "a", "b", "c")));
    assertTrue(seq(next.get(0)) > 40, "a goes on above its old counter: " + seq(next.get(0)));
    assertTrue(seq(next.get(1)) > 1, "b too: " + seq(next.get(1)));
    assertTrue(seq(next.get(2)) >= 1, "a new device starts anywhere above 0");
    await(again.closeAsync());
  }

  private static long seq(OutboxRow r) throws Exception {
    return Envelope.parse(r.body(), 1 << 20).seq();
  }

  /** The depth the probe reports every second is kept, not counted: it must stay what the file holds. */
  @Test
  void theKeptDepthIsWhatTheFileCountsThroughAppendsConfirmsARestartAndAFailedAppend() throws Exception {
    Path file = dir.resolve("depth.db");
    Outbox o = open(file);
    List<OutboxRow> rows = await(o.append(results(1_000, "a", "b", "c", "d", "e")));
    await(o.markConfirmed(List.of(rows.get(1).id(), rows.get(3).id(), rows.get(3).id())));
    await(o.markConfirmed(List.of(rows.get(1).id()))); // a second ack of a marked row changes nothing
    Outbox.Stats s = await(o.stats());
    assertEquals(3, s.depth());
    assertEquals(3L, await(o.countUnconfirmed()));
    assertTrue(s.oldestCreatedAtMs() > 0, "the oldest unconfirmed row's append time: " + s.oldestCreatedAtMs());
    await(o.closeAsync());
    Outbox again = open(file);
    assertEquals(3, await(again.stats()).depth(), "counted from the file at open");
    // a failed append: the one row of the batch is refused, nothing of it counts
    try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
         java.sql.Statement st = c.createStatement()) {
      st.execute("CREATE TRIGGER refuse BEFORE INSERT ON outbox WHEN NEW.device_id = 'bad' BEGIN SELECT RAISE(ABORT, 'refused'); END");
    }
    assertThrows(Exception.class, () -> await(again.append(results(2_000, "f", "bad"))));
    await(again.append(results(3_000, "g")));
    assertEquals(4, await(again.stats()).depth(), "recounted after the failure: 3 + g");
    assertEquals(4L, await(again.countUnconfirmed()));
    assertEquals(0, await(open(dir.resolve("empty.db")).stats()).depth());
    await(again.closeAsync());
  }

  @Test
  void pendingListsUnconfirmedRowsInOrderAndTheCleanerKeepsThem() throws Exception {
    Outbox o = open(dir.resolve("p.db"));
    List<OutboxRow> rows = await(o.append(results(System.currentTimeMillis(), "a", "b", "c", "d")));
    await(o.markConfirmed(List.of(rows.get(0).id(), rows.get(2).id())));
    List<OutboxRow> pending = await(o.pending(0, Long.MAX_VALUE, Long.MAX_VALUE, 100));
    assertEquals(List.of(rows.get(1).id(), rows.get(3).id()), pending.stream().map(OutboxRow::id).toList());
    assertEquals(rows.get(1).messageId(), pending.get(0).messageId());
    assertEquals(List.of(rows.get(3).id()), await(o.pending(rows.get(1).id(), Long.MAX_VALUE, Long.MAX_VALUE, 100)).stream().map(OutboxRow::id).toList());
    assertEquals(List.of(rows.get(1).id()), await(o.pending(0, rows.get(2).id(), Long.MAX_VALUE, 100)).stream().map(OutboxRow::id).toList(),
        "the upper bound limits the walk");
    assertEquals(2, await(o.stats()).depth());
    assertEquals(2, await(new OutboxCleaner(o, Clock.systemUTC()).clean(-60_000)), "confirmed rows older than the retention are removed");
    assertEquals(2, await(o.pending(0, Long.MAX_VALUE, Long.MAX_VALUE, 100)).size(), "unconfirmed rows are never cleaned");
    await(o.closeAsync());
  }
}
