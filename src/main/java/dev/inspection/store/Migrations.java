package dev.inspection.store;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies the versioned migrations in {@code db/migration} once per schema. Several nodes may start
 * at once: the whole run holds a transaction-scoped advisory lock keyed by the schema, so the second
 * node waits and then finds everything applied. A changed, already-applied file stops start-up. Then the
 * slot map is seeded or checked against {@code slots.total} ({@link SlotMapStart}, D11).
 */
public final class Migrations {
  private static final Logger log = LoggerFactory.getLogger(Migrations.class);

  /** In order. A new migration is a new file added here; an applied one is never edited. */
  public static final List<String> FILES = List.of("V001__base.sql", "V002__control_plane.sql", "V003__merge_payload.sql", "V004__partitions_and_state.sql", "V005__operations.sql",
      "V006__state_checks.sql", "V007__audit_log.sql", "V008__rollup_seen.sql", "V009__fleet_mode.sql", "V010__shed.sql",
      "V011__slot_map.sql", "V012__hotel.sql");

  private Migrations() {}

  public static Future<Integer> apply(Pool pool, String schema, int totalSlots) {
    return pool.withTransaction(conn -> conn.query("SELECT pg_advisory_xact_lock(hashtext('inspection.migrate." + schema + "'))").execute()
        .compose(r -> conn.query("CREATE SCHEMA IF NOT EXISTS " + schema).execute())
        .compose(r -> conn.query("SET LOCAL search_path TO " + schema).execute())
        .compose(r -> conn.query("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
              version VARCHAR(64) PRIMARY KEY, checksum VARCHAR(64) NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())
            """).execute())
        .compose(r -> conn.query("SELECT version, checksum FROM schema_migrations").execute())
        .compose(rows -> {
          Map<String, String> applied = new HashMap<>();
          for (Row row : rows) applied.put(row.getString(0), row.getString(1));
          Future<Integer> chain = Future.succeededFuture(0);
          for (String file : FILES) {
            String sql = read(file);
            String sum = sha256(sql);
            String version = file.substring(0, file.indexOf("__"));
            if (applied.containsKey(version)) {
              if (!applied.get(version).equals(sum)) {
                return Future.failedFuture(new IllegalStateException("migration " + file + " was changed after it was applied to schema "
                    + schema + " (checksum differs): restore the file and add a new migration instead"));
              }
              continue;
            }
            chain = chain.compose(n -> runOne(conn, file, version, sql, sum).map(v -> n + 1));
          }
          return chain;
        })
        .compose(n -> SlotMapStart.seedOrCheck(conn, totalSlots, schema).map(n))
        .compose(n -> conn.preparedQuery("INSERT INTO slot_lease (slot_id) SELECT g FROM generate_series(0, $1 - 1) g ON CONFLICT DO NOTHING")
            .execute(Tuple.of(totalSlots)).map(n))
        .onSuccess(n -> {
          if (n > 0) log.info("schema {}: applied {} migration(s)", schema, n);
        }));
  }

  private static Future<Void> runOne(SqlConnection conn, String file, String version, String sql, String sum) {
    log.info("applying migration {}", file);
    return conn.query(sql).execute()
        .compose(r -> conn.preparedQuery("INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)").execute(Tuple.of(version, sum)))
        .mapEmpty();
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
