package dev.inspection.it;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;

/**
 * The migration runner before Flyway (store/Migrations.java at ef4c631), kept for tests only: it builds a schema
 * the way installations of that time were built — every file in one transaction under the advisory lock, the
 * history in {@code schema_migrations} with each file's SHA-256, then the slot map seeded and the leases created.
 */
final class LegacyRunner {
  private LegacyRunner() {}

  static Future<Void> apply(Pool pool, String schema, int totalSlots, List<String> files) {
    return pool.withTransaction(conn -> {
      Future<?> chain = conn.query("SELECT pg_advisory_xact_lock(hashtext('inspection.migrate." + schema + "'))").execute()
          .compose(r -> conn.query("CREATE SCHEMA IF NOT EXISTS " + schema).execute())
          .compose(r -> conn.query("SET LOCAL search_path TO " + schema).execute())
          .compose(r -> conn.query("""
              CREATE TABLE IF NOT EXISTS schema_migrations (
                version VARCHAR(64) PRIMARY KEY, checksum VARCHAR(64) NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())
              """).execute());
      for (String file : files) {
        String sql = read(file);
        String version = file.substring(0, file.indexOf("__"));
        chain = chain.compose(r -> conn.query(sql).execute())
            .compose(r -> conn.preparedQuery("INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)").execute(Tuple.of(version, sha256(sql))));
      }
      return chain
          .compose(r -> conn.preparedQuery("INSERT INTO slot_map_version (version, total_slots, effective_at) VALUES (1, $1, now())").execute(Tuple.of(totalSlots)))
          .compose(r -> conn.preparedQuery("INSERT INTO slot_lease (slot_id) SELECT g FROM generate_series(0, $1 - 1) g ON CONFLICT DO NOTHING")
              .execute(Tuple.of(totalSlots)))
          .mapEmpty();
    });
  }

  static String read(String file) {
    try (InputStream in = LegacyRunner.class.getResourceAsStream("/db/migration/" + file)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (Exception e) {
      throw new IllegalStateException(e);
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
