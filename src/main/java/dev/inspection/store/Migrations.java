package dev.inspection.store;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a schema to the jar's version at start: Flyway applies the versioned migrations in {@code db/migration}
 * ({@link SchemaMigrator}, on a worker thread), or with {@code pg.migrate=false} only checks that none is pending.
 * Then, in one transaction under the advisory lock keyed by the schema, the slot map is seeded or checked against
 * {@code slots.total} ({@link SlotMapStart}, D11) and the slot leases are created: two first starts cannot seed two maps.
 */
public final class Migrations {
  private static final Logger log = LoggerFactory.getLogger(Migrations.class);

  /**
   * In order; the files Flyway finds in {@link SchemaMigrator#LOCATION}. An applied one is never edited. Also what the
   * runner before Flyway applied (its checksums are compared when a schema it migrated is handed over to Flyway).
   */
  public static final List<String> FILES = List.of("V001__base.sql", "V002__control_plane.sql", "V003__merge_payload.sql", "V004__partitions_and_state.sql", "V005__operations.sql",
      "V006__state_checks.sql", "V007__audit_log.sql", "V008__rollup_seen.sql", "V009__fleet_mode.sql", "V010__shed.sql",
      "V011__slot_map.sql", "V012__hotel.sql", "V013__derived_snapshot_json.sql",
      "V014__hot_updates.sql", "V015__history_one_index.sql");

  private Migrations() {}

  /** Migrates (or, {@code migrate} false, checks) {@code pg}'s schema, then seeds or checks the slot map; the number of migrations applied. */
  public static Future<Integer> apply(Vertx vertx, Pool pool, PgOptions pg, int totalSlots, boolean migrate) {
    return apply(vertx, pool, new SchemaMigrator(pg, List.of(SchemaMigrator.LOCATION)), pg.schema(), totalSlots, migrate);
  }

  public static Future<Integer> apply(Vertx vertx, Pool pool, SchemaMigrator migrator, String schema, int totalSlots, boolean migrate) {
    return vertx.<Integer>executeBlocking(() -> migrate ? migrator.migrate() : migrator.checkCurrent(), false)
        .onSuccess(n -> {
          if (n > 0) log.info("schema {}: applied {} migration(s)", schema, n);
        })
        .compose(n -> Db.inTransaction(pool, conn -> conn.query("SELECT pg_advisory_xact_lock(hashtext('inspection.migrate." + schema + "'))").execute()
            .compose(r -> conn.query("SET LOCAL search_path TO " + schema).execute())
            .compose(r -> SlotMapStart.seedOrCheck(conn, totalSlots, schema))
            .compose(v -> conn.preparedQuery("INSERT INTO slot_lease (slot_id) SELECT g FROM generate_series(0, $1 - 1) g ON CONFLICT DO NOTHING")
                .execute(Tuple.of(totalSlots)))
            .map(n)));
  }

  static String read(String file) {
    try (InputStream in = Migrations.class.getResourceAsStream("/db/migration/" + file)) {
      if (in == null) throw new IllegalStateException("migration " + file + " is missing from the jar");
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read migration " + file, e);
    }
  }

  static String sha256(String s) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
