package dev.inspection.outbox;

import io.vertx.core.Future;
import java.sql.PreparedStatement;
import java.time.Clock;

/**
 * Deletes the outbox's confirmed rows once they are older than the retention ({@code outbox.retention.ms}), a chunk
 * of rows per transaction. A probe of a million devices every 60 s confirms a million rows a minute; deleting a
 * minute's rows in one transaction held the outbox thread for 2.1 s ({@code bench.OutboxCost}), with every append and
 * confirm mark waiting behind it, and put the whole delete into the WAL file at once (which keeps its size once grown).
 * Each chunk is its own task on the outbox thread, so what is submitted meanwhile runs between two chunks.
 */
public final class OutboxCleaner {
  /** The oldest confirmed rows created before a time, through the partial index on created_at of confirmed rows. */
  private static final String CLEAN = """
      DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE confirmed = 1 AND created_at < ? ORDER BY created_at LIMIT ?)""";
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
    return chunks(clock.millis() - retentionMs, 0);
  }

  private Future<Integer> chunks(long createdBeforeMs, int deleted) {
    return deleteChunk(createdBeforeMs).compose(n -> n < chunkRows ? Future.succeededFuture(deleted + n) : chunks(createdBeforeMs, deleted + n));
  }

  /**
   * Deletes one transaction's chunk of the oldest confirmed rows, however young (the future holds how many; fewer than
   * {@link #chunkRows()} means none is left): the byte watermarks come before the retention.
   */
  public Future<Integer> deleteOldestConfirmed() {
    return deleteChunk(Long.MAX_VALUE);
  }

  /** Rows deleted per transaction. */
  public int chunkRows() {
    return chunkRows;
  }

  /** One transaction: the oldest {@link #chunkRows} confirmed rows created before {@code createdBeforeMs}. */
  private Future<Integer> deleteChunk(long createdBeforeMs) {
    return outbox.runWithoutFsync(() -> {
      try (PreparedStatement ps = outbox.connection().prepareStatement(CLEAN)) {
        ps.setLong(1, createdBeforeMs);
        ps.setInt(2, chunkRows);
        int n = ps.executeUpdate();
        outbox.connection().commit();
        return n;
      }
    });
  }
}
