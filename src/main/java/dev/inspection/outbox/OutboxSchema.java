package dev.inspection.outbox;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The outbox file's tables, and the upgrade of a file written before they were (issue 11).
 *
 * <p>A row's state lives in two narrow tables beside the wide {@code outbox} rows (the envelope, about 600 bytes): a row
 * is unconfirmed while {@code outbox_unconfirmed} holds its id (and priority, for the critical rows' index and the
 * shedding), and confirmed once the broker acked it, when its id moves to {@code outbox_confirmed} with the time. Until
 * 2026-12-06 the state was two columns of the wide row with three partial indexes on them: a confirm mark rewrote the
 * whole row and moved its entries between the indexes, and the marks took as much of the outbox thread as the appends
 * (48.6 and 43.2 % of its native samples in a capacity run). Moving an id between the narrow tables cost 0.56x the CPU
 * of the mark in {@code bench.OutboxCost}, and the outbox thread's CPU per appended row at capacity fell to 0.62x.
 *
 * <p>{@code message_id} has no index: a row's message id holds its id (the seq), so it is unique by construction, and
 * nothing looks a row up by it. Until 2026-12-07 the column was {@code UNIQUE}; keeping that index up to date cost an
 * append 1.8-2.6 us a row and the clean 0.7-1.2 (of 8.6-10.5 and 3.0-4.1, {@code bench.OutboxCost}, alternating).
 */
final class OutboxSchema {
  private static final Logger log = LoggerFactory.getLogger(OutboxSchema.class);

  /** The wide rows' columns, in the order the table of a new file has them. */
  private static final String COLUMNS = "id, message_id, device_id, cycle_id, seq, routing_key, body, created_at, priority";

  /** The wide rows' table, as a new file has it (also the rebuild's target, under another name). */
  private static String outboxTable(String name) {
    return """
        CREATE TABLE IF NOT EXISTS %s (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          message_id TEXT NOT NULL,
          device_id TEXT NOT NULL,
          cycle_id INTEGER NOT NULL,
          seq INTEGER NOT NULL,
          routing_key TEXT NOT NULL,
          body BLOB NOT NULL,
          created_at INTEGER NOT NULL,
          priority INTEGER NOT NULL DEFAULT 2)""".formatted(name);
  }

  private static final String DDL = outboxTable("outbox") + """
      ;
      CREATE TABLE IF NOT EXISTS outbox_unconfirmed (id INTEGER PRIMARY KEY, priority INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS outbox_confirmed (id INTEGER PRIMARY KEY, confirmed_at INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS idx_outbox_unconfirmed_critical_ids ON outbox_unconfirmed(id) WHERE priority = 1;
      CREATE TABLE IF NOT EXISTS probe_meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
      """;

  /** The state columns and indexes of a file written before the narrow tables. */
  private static final String[] OLD_INDEXES = {"idx_outbox_unconfirmed", "idx_outbox_confirmed_created", "idx_outbox_unconfirmed_critical"};

  private OutboxSchema() {}

  /** Creates what is missing (outside a transaction); a file of an older version is brought up to date, in one transaction. */
  static void create(Statement st) throws SQLException {
    for (String ddl : DDL.split(";")) {
      if (!ddl.isBlank()) st.execute(ddl);
    }
    OutboxShed.migrate(st);
    moveStateColumns(st);
    dropMessageIdIndex(st);
  }

  /**
   * A file of before 2026-12-07 has {@code message_id UNIQUE}, an index SQLite cannot drop on its own: the table is
   * rebuilt without it, once, in one transaction (ids, bodies and the highest id ever used kept, so seqs go on from
   * where they were). Start-up waits for it: about the time a copy of the file takes. Should it fail (a full disk: the
   * copy needs room for the table twice), the file is left as it was, which works as before, and the next start
   * tries again.
   */
  private static void dropMessageIdIndex(Statement st) throws SQLException {
    if (!hasUniqueMessageId(st)) return;
    long mb = single(st, "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()") >> 20;
    log.info("outbox file upgrade: rebuilding the outbox table of a {} MB file without its message_id index (once; start-up waits for it,"
        + " about as long as a copy of the file takes)", mb);
    long t0 = System.nanoTime();
    st.execute("BEGIN IMMEDIATE");
    try {
      // AUTOINCREMENT's highest id ever used: dropping the table drops it too
      long highest = single(st, "SELECT coalesce(max(v), 0) FROM (SELECT seq AS v FROM sqlite_sequence WHERE name = 'outbox' UNION ALL SELECT max(id) FROM outbox)");
      st.execute("DROP TABLE IF EXISTS outbox_rebuilt");
      st.execute(outboxTable("outbox_rebuilt"));
      int rows = st.executeUpdate("INSERT INTO outbox_rebuilt (" + COLUMNS + ") SELECT " + COLUMNS + " FROM outbox ORDER BY id");
      st.execute("DROP TABLE outbox");
      st.execute("ALTER TABLE outbox_rebuilt RENAME TO outbox");
      st.execute("DELETE FROM sqlite_sequence WHERE name IN ('outbox', 'outbox_rebuilt')");
      try (PreparedStatement seq = st.getConnection().prepareStatement("INSERT INTO sqlite_sequence (name, seq) VALUES ('outbox', ?)")) {
        seq.setLong(1, highest);
        seq.executeUpdate();
      }
      st.execute("COMMIT");
      log.info("outbox file upgraded: the outbox table rebuilt without its message_id index, {} rows in {} ms (ids go on after {})",
          rows, (System.nanoTime() - t0) / 1_000_000, highest);
    } catch (SQLException e) {
      try {
        st.execute("ROLLBACK");
      } catch (SQLException noTransaction) {
        e.addSuppressed(noTransaction); // SQLite rolled back on its own
      }
      log.warn("outbox file: could not rebuild the outbox table without its message_id index ({}); the file is as it was and works"
          + " as before (appends cost about 2 us more a row); the next start tries again", e.getMessage());
    }
  }

  /** Whether the outbox table still has the {@code UNIQUE} constraint's index on {@code message_id}. */
  static boolean hasUniqueMessageId(Statement st) throws SQLException {
    List<String> unique = new ArrayList<>();
    try (ResultSet rs = st.executeQuery("SELECT name FROM pragma_index_list('outbox') WHERE \"unique\" = 1 AND origin = 'u'")) {
      while (rs.next()) unique.add(rs.getString(1));
    }
    try (PreparedStatement columns = st.getConnection().prepareStatement("SELECT group_concat(name) FROM pragma_index_info(?)")) {
      for (String index : unique) {
        columns.setString(1, index);
        try (ResultSet rs = columns.executeQuery()) {
          if (rs.next() && "message_id".equals(rs.getString(1))) return true;
        }
      }
    }
    return false;
  }

  /** The first column of the first row {@code sql} answers. */
  static long single(Statement st, String sql) throws SQLException {
    try (ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /**
   * A file of before 2026-12-06 keeps each row's state in the columns {@code confirmed} and {@code confirmed_at}: their
   * ids go to the narrow tables (a confirmed row without a time gets its append time), and the columns and their indexes
   * are dropped, so that nothing reads a state no longer written. Dropping a column rewrites the table once.
   */
  private static void moveStateColumns(Statement st) throws SQLException {
    if (!hasColumn(st, "confirmed")) return;
    long t0 = System.nanoTime();
    st.execute("BEGIN IMMEDIATE");
    try {
      int unconfirmed = st.executeUpdate("INSERT OR IGNORE INTO outbox_unconfirmed (id, priority) SELECT id, priority FROM outbox WHERE confirmed = 0");
      int confirmed = st.executeUpdate(
          "INSERT OR IGNORE INTO outbox_confirmed (id, confirmed_at) SELECT id, coalesce(confirmed_at, created_at) FROM outbox WHERE confirmed <> 0");
      for (String index : OLD_INDEXES) st.execute("DROP INDEX IF EXISTS " + index);
      st.execute("ALTER TABLE outbox DROP COLUMN confirmed");
      if (hasColumn(st, "confirmed_at")) st.execute("ALTER TABLE outbox DROP COLUMN confirmed_at");
      st.execute("COMMIT");
      log.info("outbox file upgraded: the state of {} unconfirmed and {} confirmed rows moved to outbox_unconfirmed / outbox_confirmed in {} ms",
          unconfirmed, confirmed, (System.nanoTime() - t0) / 1_000_000);
    } catch (SQLException e) {
      try {
        st.execute("ROLLBACK");
      } catch (SQLException noTransaction) {
        e.addSuppressed(noTransaction); // BEGIN itself failed: nothing to roll back
      }
      throw new SQLException("cannot upgrade the outbox file's row state (nothing changed; the probe can start again with its old version): "
          + e.getMessage(), e);
    }
  }

  /** Whether the outbox table has {@code column} (an older file may lack one or still have one). */
  static boolean hasColumn(Statement st, String column) throws SQLException {
    try (ResultSet rs = st.executeQuery("PRAGMA table_info(outbox)")) {
      while (rs.next()) {
        if (rs.getString("name").equals(column)) return true;
      }
    }
    return false;
  }
}
