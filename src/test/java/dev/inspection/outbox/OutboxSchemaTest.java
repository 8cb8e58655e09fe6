package dev.inspection.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Outbox files written by older versions, opened by this one: what each upgrade keeps and what it changes. */
class OutboxSchemaTest extends OutboxFileTest {

  /** The outbox table of the first versions, the row's state in its columns (without the closing parenthesis). */
  private static final String OLD_TABLE = "CREATE TABLE outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT NOT NULL UNIQUE,"
      + " device_id TEXT NOT NULL, cycle_id INTEGER NOT NULL, seq INTEGER NOT NULL, routing_key TEXT NOT NULL, body BLOB NOT NULL,"
      + " created_at INTEGER NOT NULL, confirmed INTEGER NOT NULL DEFAULT 0, confirmed_at INTEGER";

  /** An outbox file an older version wrote: {@code statements} run on a new file. */
  private Path oldFile(String name, String... statements) throws Exception {
    Path file = dir.resolve(name);
    try (var c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement st = c.createStatement()) {
      for (String sql : statements) st.execute(sql);
    }
    return file;
  }

  @Test
  void anOutboxFileOfTheFormerVersionGainsThePriorityColumn() throws Exception {
    Path file = oldFile("old.db", OLD_TABLE + ")",
        "INSERT INTO outbox (message_id, device_id, cycle_id, seq, routing_key, body, created_at) VALUES ('p1:1:a:1', 'a', 1, 1, 'slot.1.normal', x'00', 1)");
    Outbox o = await(Outbox.open(vertx, file, "p1", topology, Clock.systemUTC()));
    assertEquals(Map.of(2, new ShedPolicy.Backlog(1, 1)), await(new OutboxShed(o, file).backlog()), "old rows count as normal");
    await(o.closeAsync());
  }

  /**
   * A file of before 2026-12-06 keeps each row's state in the wide row's columns, with three partial indexes on them: the
   * upgrade moves the ids to the narrow tables and drops the columns, and the file then works as a new one.
   */
  @Test
  void anOutboxFileWithTheStateInItsRowsHasItMovedToTheNarrowTables() throws Exception {
    Path file = oldFile("columns.db", OLD_TABLE + ", priority INTEGER NOT NULL DEFAULT 2)",
        "CREATE INDEX idx_outbox_unconfirmed ON outbox(id) WHERE confirmed = 0",
        "CREATE INDEX idx_outbox_confirmed_created ON outbox(created_at) WHERE confirmed = 1",
        "CREATE INDEX idx_outbox_unconfirmed_critical ON outbox(id) WHERE confirmed = 0 AND priority = 1", """
          INSERT INTO outbox (message_id, device_id, cycle_id, seq, routing_key, body, created_at, confirmed, confirmed_at, priority) VALUES
            ('p1:1:a:1', 'a', 1, 1, 'slot.1.normal', x'00', 100, 1, 150, 2),
            ('p1:1:b:2', 'b', 1, 2, 'slot.2.high', x'0000', 100, 0, NULL, 1),
            ('p1:1:c:3', 'c', 1, 3, 'slot.3.normal', x'000000', 200, 1, NULL, 3),
            ('p1:1:d:4', 'd', 1, 4, 'slot.4.normal', x'00000000', 200, 0, NULL, 2)""");
    Outbox o = await(Outbox.open(vertx, file, "p1", topology, Clock.systemUTC()));
    assertEquals(List.of(2L, 4L), await(o.pending(0, Long.MAX_VALUE, Long.MAX_VALUE, 10)).stream().map(OutboxRow::id).toList(), "the unconfirmed rows");
    assertEquals(2, await(o.stats()).depth());
    assertEquals(Map.of(1, new ShedPolicy.Backlog(1, 2), 2, new ShedPolicy.Backlog(1, 4)), await(new OutboxShed(o, file).backlog()), "by priority");
    List<OutboxRow> added = await(o.append(normal(1, 60_000)));
    assertEquals(5L, added.get(0).id(), "ids go on from the file's");
    assertEquals(2, await(o.markConfirmed(List.of(2L, 5L))));
    assertEquals(1, await(o.stats()).depth());
    await(o.closeAsync());
    try (var c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement st = c.createStatement()) {
      try (ResultSet rs = st.executeQuery("SELECT count(*) FROM pragma_table_info('outbox') WHERE name IN ('confirmed', 'confirmed_at')")) {
        rs.next();
        assertEquals(0, rs.getLong(1), "the state columns are gone: nothing reads a state no longer written");
      }
      try (ResultSet rs = st.executeQuery("SELECT id, confirmed_at FROM outbox_confirmed WHERE id IN (1, 3) ORDER BY id")) {
        rs.next();
        assertEquals(150, rs.getLong(2), "a confirmed row keeps its time");
        rs.next();
        assertEquals(200, rs.getLong(2), "one confirmed without a time gets its append time");
      }
      try (ResultSet rs = st.executeQuery("SELECT group_concat(id) FROM outbox_unconfirmed")) {
        rs.next();
        assertEquals("4", rs.getString(1));
      }
    }
  }

  /** The wide table of 2026-12-06, {@code message_id UNIQUE}, with its narrow state tables. */
  private static final String[] UNIQUE_LAYOUT = {
      "CREATE TABLE outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT NOT NULL UNIQUE, device_id TEXT NOT NULL,"
          + " cycle_id INTEGER NOT NULL, seq INTEGER NOT NULL, routing_key TEXT NOT NULL, body BLOB NOT NULL,"
          + " created_at INTEGER NOT NULL, priority INTEGER NOT NULL DEFAULT 2)",
      "CREATE TABLE outbox_unconfirmed (id INTEGER PRIMARY KEY, priority INTEGER NOT NULL)",
      "CREATE TABLE outbox_confirmed (id INTEGER PRIMARY KEY, confirmed_at INTEGER NOT NULL)",
      """
        INSERT INTO outbox (message_id, device_id, cycle_id, seq, routing_key, body, created_at, priority) VALUES
          ('p1:1:a:1', 'a', 1, 1, 'slot.1.normal', x'01', 100, 2),
          ('p1:1:b:2', 'b', 1, 2, 'slot.2.high', x'0202', 100, 1),
          ('p1:2:c:3', 'c', 2, 3, 'slot.3.normal', x'030303', 200, 3),
          ('p1:2:d:4', 'd', 2, 4, 'slot.4.normal', x'04040404', 200, 2),
          ('p1:2:e:5', 'e', 2, 5, 'slot.5.normal', x'05', 200, 2),
          ('p1:2:f:6', 'f', 2, 6, 'slot.6.normal', x'06', 200, 2)""",
      // the two newest rows were confirmed and cleaned: AUTOINCREMENT remembers 6, the table's highest is 4
      "DELETE FROM outbox WHERE id > 4",
      "INSERT INTO outbox_unconfirmed (id, priority) VALUES (2, 1), (4, 2)",
      "INSERT INTO outbox_confirmed (id, confirmed_at) VALUES (1, 150), (3, 250)"};

  private static final String ROWS = "SELECT group_concat(id || '|' || message_id || '|' || device_id || '|' || cycle_id || '|' || seq || '|'"
      + " || routing_key || '|' || hex(body) || '|' || created_at || '|' || priority, ';') FROM (SELECT * FROM outbox ORDER BY id)";

  private static String query(Path file, String sql) throws Exception {
    try (var c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static boolean uniqueMessageId(Path file) throws Exception {
    try (var c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement st = c.createStatement()) {
      return OutboxSchema.hasUniqueMessageId(st);
    }
  }

  /**
   * A file of 2026-12-06 indexes message_id (UNIQUE): the table is rebuilt without the index, every row as it was, and
   * ids go on after the highest ever used, not after the highest left in the table (a seq is never given twice).
   */
  @Test
  void anOutboxFileWithAUniqueMessageIdIsRebuiltWithoutItKeepingEveryRowAndTheIds() throws Exception {
    Path file = oldFile("unique.db", UNIQUE_LAYOUT);
    String before = query(file, ROWS);
    assertTrue(uniqueMessageId(file), "the old layout, as written");
    Outbox o = await(Outbox.open(vertx, file, "p1", topology, Clock.systemUTC()));
    assertEquals(List.of(2L, 4L), await(o.pending(0, Long.MAX_VALUE, Long.MAX_VALUE, 10)).stream().map(OutboxRow::id).toList(), "the unconfirmed rows");
    List<OutboxRow> added = await(o.append(normal(2, 60_000)));
    assertEquals(List.of(7L, 8L), added.stream().map(OutboxRow::id).toList(), "ids go on after the highest ever used (6)");
    assertEquals(2, await(o.markConfirmed(List.of(2L, 7L))));
    assertEquals(2, await(o.stats()).depth());
    await(o.closeAsync());
    assertFalse(uniqueMessageId(file), "the index is gone");
    assertTrue(query(file, ROWS).startsWith(before + ";7|p1:60000:dev-0:7|"), "the old rows unchanged, in order, then the new ones");
    assertEquals("8", query(file, "SELECT seq FROM sqlite_sequence WHERE name = 'outbox'"));
    assertEquals("outbox", query(file, "SELECT group_concat(name) FROM sqlite_master WHERE name LIKE 'outbox%' AND type = 'table' AND name NOT LIKE 'outbox_%'"),
        "no table of the rebuild is left");
    // a second start finds nothing to do and changes nothing
    String after = query(file, ROWS);
    await(await(Outbox.open(vertx, file, "p1", topology, Clock.systemUTC())).closeAsync());
    assertEquals(after, query(file, ROWS));
  }

  /**
   * A rebuild that fails (here: a view on the outbox table, which SQLite will not let the rename leave pointing at
   * nothing) rolls back whole: the file keeps its index and every row, and the outbox works with it as before.
   */
  @Test
  void aRebuildThatFailsLeavesTheFileAsItWasAndTheOutboxWorks() throws Exception {
    List<String> layout = new ArrayList<>(List.of(UNIQUE_LAYOUT));
    layout.add("CREATE VIEW outbox_devices AS SELECT device_id FROM outbox");
    Path file = oldFile("failing.db", layout.toArray(String[]::new));
    String before = query(file, ROWS);
    Outbox o = await(Outbox.open(vertx, file, "p1", topology, Clock.systemUTC()));
    assertTrue(uniqueMessageId(file), "the index is still there");
    assertEquals(before, query(file, ROWS), "every row as it was");
    assertEquals(List.of(7L), await(o.append(normal(1, 60_000))).stream().map(OutboxRow::id).toList(), "ids go on");
    assertEquals(List.of(2L, 4L, 7L), await(o.pending(0, Long.MAX_VALUE, Long.MAX_VALUE, 10)).stream().map(OutboxRow::id).toList());
    await(o.closeAsync());
  }

  /** A new file never had the index. */
  @Test
  void aNewFileHasNoIndexOnMessageId() throws Exception {
    Path file = dir.resolve("new.db");
    await(await(Outbox.open(vertx, file, "p1", topology, Clock.systemUTC())).closeAsync());
    assertFalse(uniqueMessageId(file));
    assertEquals("0", query(file, "SELECT count(*) FROM pragma_index_list('outbox')"));
  }
}
