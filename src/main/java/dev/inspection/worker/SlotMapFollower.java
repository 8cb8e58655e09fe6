package dev.inspection.worker;

import dev.inspection.messaging.SlotMapWindow;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import java.time.Clock;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker's copy of the slot map's versions (seed 000 §3.4), read from {@code slot_map_version} on every
 * lease poll and handed to each slot's {@link ResultGuard}, which judges a result by the version it is
 * stamped with. The database's times are moved to this worker's clock by the offset measured in the same
 * read, so the guard compares them with the clock it already uses. Until the first read, and whenever a
 * read fails, the last map stays (at start: one version with {@code slots.total}).
 */
public final class SlotMapFollower implements Supplier<SlotMapWindow> {
  private static final Logger log = LoggerFactory.getLogger(SlotMapFollower.class);

  static final String VERSIONS = "SELECT version, total_slots, effective_at, window_until, clock_timestamp() FROM slot_map_version ORDER BY version";

  private final Pool pool;
  private final Clock clock;
  private volatile SlotMapWindow map;
  private volatile long newest = 1;
  /**
   * A read is under way: a poll issues no second one. One that waits (the table locked: a migration waiting for its lock
   * queues every read behind it) holds one connection of the worker's control pool; a read every poll took all three
   * within seconds, and the heartbeats timed out waiting for a connection (as the lease renewals did, 45ee610).
   */
  private boolean reading;

  public SlotMapFollower(Pool pool, Clock clock, int totalSlots) {
    this.pool = pool;
    this.clock = clock;
    this.map = SlotMapWindow.single(totalSlots);
  }

  @Override
  public SlotMapWindow get() {
    return map;
  }

  /** Reads the versions again, unless a read is under way; a failure keeps the map this worker has. */
  public Future<Void> refresh() {
    if (reading) return Future.succeededFuture();
    reading = true;
    return pool.query(VERSIONS).execute().onComplete(ar -> reading = false).map(rows -> {
      SlotMapWindow read = read(rows, clock.millis());
      if (read != null) {
        if (read.newest().version() != newest) {
          log.info("slot map: version {} ({} slots) is the newest", read.newest().version(), read.newest().totalSlots());
          newest = read.newest().version();
        }
        map = read;
      }
      return (Void) null;
    }).otherwise(e -> {
      log.debug("slot map read failed, keeping version {}: {}", newest, e.toString());
      return null;
    });
  }

  static SlotMapWindow read(RowSet<Row> rows, long localNowMs) {
    List<SlotMapWindow.Version> out = new ArrayList<>();
    long offset = 0;
    for (Row r : rows) offset = localNowMs - r.getOffsetDateTime(4).toInstant().toEpochMilli();
    for (Row r : rows) {
      OffsetDateTime w = r.getOffsetDateTime(3);
      out.add(new SlotMapWindow.Version(r.getLong(0), r.getInteger(1), r.getOffsetDateTime(2).toInstant().toEpochMilli() + offset,
          w == null ? 0 : w.toInstant().toEpochMilli() + offset));
    }
    return out.isEmpty() ? null : new SlotMapWindow(out);
  }
}
