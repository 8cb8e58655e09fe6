package dev.inspection.store;

import dev.inspection.config.ConfigException;
import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;

/**
 * D11: the slot map in the database is the truth. The first start of an installation seeds version 1 from
 * {@code slots.total}; every later start compares its {@code slots.total} with the map in force and refuses
 * to start (a {@link ConfigException}: exit code 2) when they differ, because a node hashing devices with
 * another slot count routes and writes them under the wrong slot. Runs inside the migration transaction,
 * under its advisory lock, so two first starts cannot seed two maps. "In force" is judged by
 * {@code clock_timestamp()}, not {@code now()}: a node that waited for the lock has a transaction older than the
 * seed the first node committed meanwhile, and by its {@code now()} that seed was not in force yet — it seeded again
 * and hit the key (five nodes migrating at once, InventoryIT).
 */
public final class SlotMapStart {
  static final String IN_FORCE = """
      SELECT version, total_slots, effective_at FROM slot_map_version WHERE effective_at <= clock_timestamp()
      ORDER BY version DESC LIMIT 1""";
  static final String SEED = "INSERT INTO slot_map_version (version, total_slots, effective_at) VALUES (1, $1, now())";

  /** The map in force: its version, slot count and since when. */
  public record InForce(long version, int totalSlots, OffsetDateTime effectiveAt) {}

  /** What a starting node does about the map. */
  public enum Decision { SEED, AGREE, REFUSE }

  private SlotMapStart() {}

  /** Pure: {@code inForce} null means the installation has no map yet. */
  public static Decision decide(InForce inForce, int configured) {
    if (inForce == null) return Decision.SEED;
    return inForce.totalSlots() == configured ? Decision.AGREE : Decision.REFUSE;
  }

  /** The refusal, naming both values and what to do. */
  public static String refusal(InForce inForce, int configured, String schema) {
    return "slots.total is " + configured + " in this node's configuration, but the slot map in force in the database (schema " + schema
        + ", version " + inForce.version() + ", since " + inForce.effectiveAt() + ") has " + inForce.totalSlots() + " slots."
        + " The map in the database is the truth (slots.total only seeds a new installation): set slots.total=" + inForce.totalSlots()
        + " (INSPECT_SLOTS_TOTAL) for this node; to change the slot count, reshard with POST /api/v1/slot-map {\"slots\": " + configured
        + "} on the leader (README \"Resharding\")";
  }

  /** Seeds or checks the map on {@code conn} (search_path set); fails with a {@link ConfigException} on a mismatch. */
  static Future<Void> seedOrCheck(SqlConnection conn, int configured, String schema) {
    return conn.query(IN_FORCE).execute().compose(rows -> {
      InForce inForce = read(rows);
      return switch (decide(inForce, configured)) {
        case SEED -> conn.preparedQuery(SEED).execute(Tuple.of(configured)).mapEmpty();
        case AGREE -> Future.<Void>succeededFuture();
        case REFUSE -> Future.<Void>failedFuture(new ConfigException(refusal(inForce, configured, schema)));
      };
    });
  }

  private static InForce read(RowSet<Row> rows) {
    if (rows.size() == 0) return null;
    Row r = rows.iterator().next();
    return new InForce(r.getLong(0), r.getInteger(1), r.getOffsetDateTime(2));
  }
}
