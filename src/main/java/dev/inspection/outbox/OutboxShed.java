package dev.inspection.outbox;

import dev.inspection.outbox.ShedPolicy.Backlog;
import dev.inspection.outbox.ShedPolicy.Usage;
import io.vertx.core.Future;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The outbox's shedding store (issue 12 item 4, D10: shed is never the same as lost). A shed row is
 * deleted from the outbox — only whole deleted rows free pages that later appends reuse (emptying bodies in
 * place was measured to free none, so the file kept growing) — and its identity (message id, device,
 * cycle, seq, priority) goes to the small {@code shed_row} table, so the ledger can tell it from a lost one;
 * it is counted per device, minute of its check time and priority in {@code shed_ledger}; all in one
 * transaction. Runs on the outbox's thread like every other outbox call.
 */
public final class OutboxShed {
  private static final String LEDGER_DDL = """
      CREATE TABLE IF NOT EXISTS shed_ledger (
        device_id TEXT NOT NULL, minute INTEGER NOT NULL, priority INTEGER NOT NULL, count INTEGER NOT NULL,
        reported INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (device_id, minute, priority))""";
  private static final String SHED_ROW_DDL = """
      CREATE TABLE IF NOT EXISTS shed_row (
        id INTEGER PRIMARY KEY, message_id TEXT NOT NULL, device_id TEXT NOT NULL, cycle_id INTEGER NOT NULL, seq INTEGER NOT NULL,
        priority INTEGER NOT NULL, shed_at INTEGER NOT NULL)""";
  private static final String SHED_INDEX = "CREATE INDEX IF NOT EXISTS idx_shed_row_at ON shed_row(shed_at)";
  private static final String BACKLOG = """
      SELECT u.priority, count(*), sum(length(o.body)) FROM outbox_unconfirmed u CROSS JOIN outbox o WHERE o.id = u.id GROUP BY u.priority""";
  private static final String OLDEST = """
      SELECT o.id, o.device_id, o.cycle_id FROM outbox_unconfirmed u CROSS JOIN outbox o WHERE o.id = u.id AND u.priority = ? ORDER BY u.id LIMIT ?""";
  private static final String KEEP_ID = """
      INSERT INTO shed_row (id, message_id, device_id, cycle_id, seq, priority, shed_at)
      SELECT id, message_id, device_id, cycle_id, seq, priority, ? FROM outbox o
      WHERE o.id = ? AND EXISTS (SELECT 1 FROM outbox_unconfirmed u WHERE u.id = o.id)""";
  /** The row while it is unconfirmed (so before its id leaves {@code outbox_unconfirmed}), then its id: the count. */
  private static final String DELETE_ROW = "DELETE FROM outbox WHERE id = ? AND EXISTS (SELECT 1 FROM outbox_unconfirmed u WHERE u.id = outbox.id)";
  private static final String DELETE = "DELETE FROM outbox_unconfirmed WHERE id = ?";
  private static final String COUNT = """
      INSERT INTO shed_ledger (device_id, minute, priority, count) VALUES (?, ?, ?, ?)
      ON CONFLICT(device_id, minute, priority) DO UPDATE SET count = count + excluded.count""";
  private static final String CLEAN = "DELETE FROM shed_row WHERE shed_at < ?";
  private static final String TOTALS = "SELECT priority, sum(count) FROM shed_ledger GROUP BY priority";
  private static final String UNREPORTED = "SELECT device_id, minute, priority, count FROM shed_ledger WHERE count > reported ORDER BY minute LIMIT ?";
  private static final String REPORTED = "UPDATE shed_ledger SET reported = max(reported, ?) WHERE device_id = ? AND minute = ? AND priority = ?";
  private static final String DEVICE_MINUTES = "SELECT device_id, minute, priority, count FROM shed_ledger ORDER BY minute, device_id, priority";

  /** One ledger line: results of a device shed in one minute of their check time, by priority. */
  public record Entry(String deviceId, long minuteEpochMs, int priority, long count) {}

  private final Outbox outbox;
  private final Path file;

  public OutboxShed(Outbox outbox, Path file) {
    this.outbox = outbox;
    this.file = file;
  }

  /** Brings an outbox file of an older version up to date (the priority column, the shed ledger). */
  static void migrate(Statement st) throws SQLException {
    // rows of an older file were written before priorities were known: normal (2), never shed as low
    if (!OutboxSchema.hasColumn(st, "priority")) st.execute("ALTER TABLE outbox ADD COLUMN priority INTEGER NOT NULL DEFAULT 2");
    st.execute(LEDGER_DDL);
    st.execute(SHED_ROW_DDL);
    st.execute(SHED_INDEX);
  }

  /** Unconfirmed rows, bytes the file uses (its used pages and its WAL) and bytes free for it (the disk's plus the file's free pages). */
  public Future<Usage> usage(long unconfirmedRows) {
    return outbox.run(() -> {
      Connection db = outbox.connection();
      long pageSize;
      long pages;
      long freePages;
      try (Statement st = db.createStatement()) {
        pageSize = OutboxSchema.single(st, "PRAGMA page_size");
        pages = OutboxSchema.single(st, "PRAGMA page_count");
        freePages = OutboxSchema.single(st, "PRAGMA freelist_count");
      } finally {
        db.commit();
      }
      Path wal = Path.of(file + "-wal");
      long walBytes = Files.exists(wal) ? Files.size(wal) : 0;
      long diskFree = Files.getFileStore(file.toAbsolutePath().getParent()).getUsableSpace();
      return new Usage(unconfirmedRows, (pages - freePages) * pageSize + walBytes, diskFree + freePages * pageSize);
    });
  }

  /** Unconfirmed rows and their body bytes per device priority (read only when a watermark is crossed: it scans them). */
  public Future<Map<Integer, Backlog>> backlog() {
    return outbox.run(() -> {
      Map<Integer, Backlog> out = new HashMap<>();
      Connection db = outbox.connection();
      try (Statement st = db.createStatement(); ResultSet rs = st.executeQuery(BACKLOG)) {
        while (rs.next()) out.put(rs.getInt(1), new Backlog(rs.getLong(2), rs.getLong(3)));
      } finally {
        db.commit();
      }
      return out;
    });
  }

  /**
   * Sheds the {@code n} oldest unconfirmed rows of a priority, leaving out rows the publisher has in flight
   * (they may be in the broker already), and counts them in the ledger; one transaction. Returns how many.
   */
  public Future<Integer> shed(int priority, long n, Set<Long> inFlight, long nowMs) {
    return outbox.run(() -> {
      Connection db = outbox.connection();
      try {
        List<long[]> rows = new ArrayList<>();
        List<String> devices = new ArrayList<>();
        try (PreparedStatement ps = db.prepareStatement(OLDEST)) {
          ps.setInt(1, priority);
          ps.setLong(2, n + inFlight.size());
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next() && rows.size() < n) {
              if (inFlight.contains(rs.getLong(1))) continue;
              rows.add(new long[] {rs.getLong(1), rs.getLong(3)});
              devices.add(rs.getString(2));
            }
          }
        }
        Map<String, Map<Long, Long>> perMinute = new LinkedHashMap<>();
        long deleted = 0;
        try (PreparedStatement keep = db.prepareStatement(KEEP_ID); PreparedStatement row = db.prepareStatement(DELETE_ROW);
             PreparedStatement delete = db.prepareStatement(DELETE)) {
          for (long[] r : rows) {
            keep.setLong(1, nowMs);
            keep.setLong(2, r[0]);
            keep.addBatch();
            row.setLong(1, r[0]);
            row.addBatch();
            delete.setLong(1, r[0]);
            delete.addBatch();
          }
          keep.executeBatch();
          row.executeBatch();
          for (int c : delete.executeBatch()) deleted += Math.max(c, 0);
        }
        for (int i = 0; i < rows.size(); i++) {
          perMinute.computeIfAbsent(devices.get(i), d -> new HashMap<>()).merge(rows.get(i)[1] / 60_000 * 60_000, 1L, Long::sum);
        }
        try (PreparedStatement count = db.prepareStatement(COUNT)) {
          for (Map.Entry<String, Map<Long, Long>> d : perMinute.entrySet()) {
            for (Map.Entry<Long, Long> m : d.getValue().entrySet()) {
              count.setString(1, d.getKey());
              count.setLong(2, m.getKey());
              count.setInt(3, priority);
              count.setLong(4, m.getValue());
              count.addBatch();
            }
          }
          count.executeBatch();
        }
        db.commit();
        outbox.removedUnconfirmed(deleted);
        return rows.size();
      } catch (SQLException e) {
        db.rollback();
        throw e;
      }
    });
  }

  /** Enters results that never reached the outbox (a failed append) in the ledger, per device-minute and priority. */
  public Future<Void> recordDropped(List<Entry> entries) {
    return outbox.run(() -> {
      Connection db = outbox.connection();
      try (PreparedStatement count = db.prepareStatement(COUNT)) {
        for (Entry e : entries) {
          count.setString(1, e.deviceId());
          count.setLong(2, e.minuteEpochMs());
          count.setInt(3, e.priority());
          count.setLong(4, e.count());
          count.addBatch();
        }
        count.executeBatch();
        db.commit();
      }
      return null;
    });
  }

  /** Results shed so far, per priority (over the ledger this file still holds). */
  public Future<Map<Integer, Long>> totals() {
    return outbox.run(() -> {
      Map<Integer, Long> out = new HashMap<>();
      Connection db = outbox.connection();
      try (Statement st = db.createStatement(); ResultSet rs = st.executeQuery(TOTALS)) {
        while (rs.next()) out.put(rs.getInt(1), rs.getLong(2));
      } finally {
        db.commit();
      }
      return out;
    });
  }

  /** The ledger, per device-minute and priority, oldest minute first. */
  public Future<List<Entry>> ledger() {
    return outbox.run(() -> {
      List<Entry> out = new ArrayList<>();
      Connection db = outbox.connection();
      try (Statement st = db.createStatement(); ResultSet rs = st.executeQuery(DEVICE_MINUTES)) {
        while (rs.next()) out.add(new Entry(rs.getString(1), rs.getLong(2), rs.getInt(3), rs.getLong(4)));
      } finally {
        db.commit();
      }
      return out;
    });
  }

  /** Ledger lines whose running count the schedulers have not been told yet (oldest minute first). */
  public Future<List<Entry>> unreported(int limit) {
    return outbox.run(() -> {
      List<Entry> out = new ArrayList<>();
      Connection db = outbox.connection();
      try (PreparedStatement ps = db.prepareStatement(UNREPORTED)) {
        ps.setInt(1, limit);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) out.add(new Entry(rs.getString(1), rs.getLong(2), rs.getInt(3), rs.getLong(4)));
        }
      } finally {
        db.commit();
      }
      return out;
    });
  }

  /** The broker confirmed a report of these running counts. */
  public Future<Void> markReported(List<Entry> entries) {
    return outbox.run(() -> {
      Connection db = outbox.connection();
      try (PreparedStatement ps = db.prepareStatement(REPORTED)) {
        for (Entry e : entries) {
          ps.setLong(1, e.count());
          ps.setString(2, e.deviceId());
          ps.setLong(3, e.minuteEpochMs());
          ps.setInt(4, e.priority());
          ps.addBatch();
        }
        ps.executeBatch();
        db.commit();
      } catch (SQLException ex) {
        db.rollback();
        throw ex;
      }
      return null;
    });
  }

  /** Forgets the identities of rows shed longer ago than the retention (their ledger counts stay). */
  public Future<Integer> clean(long retentionMs, long nowMs) {
    return outbox.run(() -> {
      Connection db = outbox.connection();
      try (PreparedStatement ps = db.prepareStatement(CLEAN)) {
        ps.setLong(1, nowMs - retentionMs);
        int n = ps.executeUpdate();
        db.commit();
        return n;
      }
    });
  }
}
