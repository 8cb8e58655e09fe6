package dev.inspection.outbox;

import io.vertx.core.Future;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;

/**
 * Deletes the outbox's confirmed rows once they are older than the retention ({@code outbox.retention.ms}), a chunk
 * of rows per transaction. A probe of a million devices every 60 s confirms a million rows a minute; deleting a
 * minute's rows in one transaction held the outbox thread for 2.1 s ({@code bench.OutboxCost}), with every append and
 * confirm mark waiting behind it, and put the whole delete into the WAL file at once (which keeps its size once grown).
 * Each chunk is its own task on the outbox thread, so what is submitted meanwhile runs between two chunks.
 *
 * <p>Confirmed rows are found through {@code outbox_confirmed}, the narrow table of confirmed ids ({@link OutboxSchema}),
 * in id order, which is append order: the rows appended before the cut-off come first. Where the cut-off lies is found
 * once per clean by a binary search over the ids (a row's append time only grows with its id, but for a clock stepped
 * back, and each row's own time is checked again).
 */
public final class OutboxCleaner {
  /** The first row at or above an id: ids only grow with the append time. */
  private static final String AT_OR_AFTER = "SELECT id, created_at FROM outbox WHERE id >= ? ORDER BY id LIMIT 1";
  /**
   * The id range of the oldest confirmed rows below the cut-off's id that were appended before it (the narrow table's ids
   * in order), and how many: the chunk is every such row in the range.
   */
  private static final String OLDEST = """
      SELECT min(id), max(id), count(*) FROM (
        SELECT c.id FROM outbox_confirmed c CROSS JOIN outbox o WHERE o.id = c.id AND c.id < ? AND o.created_at < ? ORDER BY c.id LIMIT ?)""";
  private static final String DELETE_ROWS = """
      DELETE FROM outbox WHERE id IN (SELECT id FROM outbox_confirmed WHERE id BETWEEN ? AND ?) AND created_at < ?""";
  /** The confirmed ids whose rows went (a row the clock made look young stays, and so does its id). */
  private static final String DELETE_IDS = """
      DELETE FROM outbox_confirmed WHERE id BETWEEN ? AND ? AND id NOT IN (SELECT id FROM outbox WHERE id BETWEEN ? AND ?)""";
  /** Rows per transaction: about 20 ms of the outbox thread. */
  public static final int CHUNK_ROWS = 10_000;

  private final Outbox outbox;
  private final Clock clock;
  private final int chunkRows;

  public OutboxCleaner(Outbox outbox, Clock clock) {
    this(outbox, clock, CHUNK_ROWS);
  }

  /** {@code chunkRows}: rows deleted per transaction (at least 1). */
  public OutboxCleaner(Outbox outbox, Clock clock, int chunkRows) {
    if (chunkRows < 1) throw new IllegalArgumentException("the outbox cleaner deletes at least 1 row per transaction, got " + chunkRows);
    this.outbox = outbox;
    this.clock = clock;
    this.chunkRows = chunkRows;
  }

  /**
   * Deletes confirmed rows created before now - {@code retentionMs}; the future holds how many. The commits skip the
   * fsync ({@link Outbox#runWithoutFsync}): a delete lost on power loss is done again by the next clean.
   */
  public Future<Integer> clean(long retentionMs) {
    long createdBeforeMs = clock.millis() - retentionMs;
    return outbox.run(() -> {
      long bound = firstIdAppendedAtOrAfter(outbox.connection(), createdBeforeMs);
      outbox.connection().commit();
      return bound;
    }).compose(bound -> chunks(bound, createdBeforeMs, 0));
  }

  private Future<Integer> chunks(long belowId, long createdBeforeMs, int deleted) {
    return deleteChunk(belowId, createdBeforeMs)
        .compose(n -> n < chunkRows ? Future.succeededFuture(deleted + n) : chunks(belowId, createdBeforeMs, deleted + n));
  }

  /**
   * Deletes one transaction's chunk of the oldest confirmed rows, however young (the future holds how many; fewer than
   * {@link #chunkRows()} means none is left): the byte watermarks come before the retention.
   */
  public Future<Integer> deleteOldestConfirmed() {
    return deleteChunk(Long.MAX_VALUE, Long.MAX_VALUE);
  }

  /** Rows deleted per transaction. */
  public int chunkRows() {
    return chunkRows;
  }

  /**
   * The lowest id whose row was appended at or after {@code ms} (past the last row when none was), by a binary search
   * over the ids: about 25 look-ups of one row for a file of millions, where a scan for it read every older row.
   */
  static long firstIdAppendedAtOrAfter(Connection db, long ms) throws SQLException {
    long hi;
    try (Statement st = db.createStatement(); ResultSet rs = st.executeQuery("SELECT coalesce(max(id), 0) + 1 FROM outbox")) {
      rs.next();
      hi = rs.getLong(1);
    }
    long lo = 0; // every row below lo was appended before ms; the answer lies in [lo, hi]
    try (PreparedStatement ps = db.prepareStatement(AT_OR_AFTER)) {
      while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        long[] r = rowAtOrAfter(ps, mid);
        if (r == null || r[1] >= ms) hi = mid; // no row from mid up to r's id was appended before ms
        else lo = r[0] + 1;
      }
    }
    return lo;
  }

  /** {id, created_at} of the first row with an id at or above {@code id}, or null. */
  private static long[] rowAtOrAfter(PreparedStatement ps, long id) throws SQLException {
    ps.setLong(1, id);
    try (ResultSet rs = ps.executeQuery()) {
      return rs.next() ? new long[] {rs.getLong(1), rs.getLong(2)} : null;
    }
  }

  /** One transaction: the oldest {@link #chunkRows} confirmed rows below {@code belowId} created before {@code createdBeforeMs}. */
  private Future<Integer> deleteChunk(long belowId, long createdBeforeMs) {
    return outbox.runWithoutFsync(() -> {
      Connection db = outbox.connection();
      long first;
      long last;
      int n;
      try (PreparedStatement ps = db.prepareStatement(OLDEST)) {
        ps.setLong(1, belowId);
        ps.setLong(2, createdBeforeMs);
        ps.setInt(3, chunkRows);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          first = rs.getLong(1);
          last = rs.getLong(2);
          n = rs.getInt(3);
        }
      }
      if (n > 0) {
        try (PreparedStatement rows = db.prepareStatement(DELETE_ROWS); PreparedStatement ids = db.prepareStatement(DELETE_IDS)) {
          rows.setLong(1, first);
          rows.setLong(2, last);
          rows.setLong(3, createdBeforeMs);
          rows.executeUpdate();
          ids.setLong(1, first);
          ids.setLong(2, last);
          ids.setLong(3, first);
          ids.setLong(4, last);
          ids.executeUpdate();
        }
      }
      db.commit();
      return n;
    });
  }
}
