package dev.inspection.outbox;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
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
 */
final class OutboxSchema {
  private static final Logger log = LoggerFactory.getLogger(OutboxSchema.class);

  private static final String DDL = """
      CREATE TABLE IF NOT EXISTS outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        message_id TEXT NOT NULL UNIQUE,
        device_id TEXT NOT NULL,
        cycle_id INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        routing_key TEXT NOT NULL,
        body BLOB NOT NULL,
        created_at INTEGER NOT NULL,
        priority INTEGER NOT NULL DEFAULT 2);
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
