package dev.inspection.store;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import java.util.regex.Pattern;

/**
 * Where and how to reach PostgreSQL: the {@code pg.*} keys, read once. {@code applicationName} shows in
 * {@code pg_stat_activity} (one per role, so an operator sees which process holds a lock).
 */
public record PgOptions(String host, int port, String database, String user, String password, String schema, boolean ssl,
    long idleTxTimeoutMs, String applicationName) {
  private static final Pattern SCHEMA = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

  public PgOptions {
    if (!SCHEMA.matcher(schema).matches()) {
      throw new ConfigException("pg.schema '" + schema + "' is not a plain lower-case identifier ([a-z_][a-z0-9_]*)");
    }
  }

  public static PgOptions from(Config c) {
    return new PgOptions(c.get(Keys.PG_HOST), c.getInt(Keys.PG_PORT), c.get(Keys.PG_DATABASE), c.get(Keys.PG_USER), c.get(Keys.PG_PASSWORD),
        c.get(Keys.PG_SCHEMA), c.getBool(Keys.PG_SSL), c.getLong(Keys.PG_IDLE_TX_TIMEOUT_MS), "inspection-" + c.role().name().toLowerCase());
  }

  /** The same database under another application name (a dedicated session an operator should recognise). */
  public PgOptions named(String name) {
    return new PgOptions(host, port, database, user, password, schema, ssl, idleTxTimeoutMs, name);
  }

  /** host:port/database, for messages (never the password). */
  public String where() {
    return host + ":" + port + "/" + database;
  }
}
