package dev.inspection.store;

import dev.inspection.common.Pem;
import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Where and how to reach PostgreSQL: the {@code pg.*} keys, read once. {@code applicationName} shows in
 * {@code pg_stat_activity} (one per role, so an operator sees which process holds a lock). {@code sslMode}
 * is one of {@link #SSL_MODES} (libpq's meanings); {@code tlsCa} a PEM file of CA certificates or empty.
 */
public record PgOptions(String host, int port, String database, String user, String password, String schema, String sslMode, String tlsCa,
    long idleTxTimeoutMs, String applicationName) {
  private static final Pattern SCHEMA = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
  public static final List<String> SSL_MODES = List.of("disable", "require", "verify-ca", "verify-full");

  public PgOptions {
    if (!SCHEMA.matcher(schema).matches()) {
      throw new ConfigException("pg.schema '" + schema + "' is not a plain lower-case identifier ([a-z_][a-z0-9_]*)");
    }
    if (!SSL_MODES.contains(sslMode)) {
      throw new ConfigException("pg.ssl.mode '" + sslMode + "' is not one of " + String.join(", ", SSL_MODES)
          + ": use verify-full (with pg.tls.ca) to encrypt and authenticate the server");
    }
  }

  /** Reads the keys (no file access: safe on the event loop). */
  public static PgOptions from(Config c) {
    return new PgOptions(c.get(Keys.PG_HOST), c.getInt(Keys.PG_PORT), c.get(Keys.PG_DATABASE), c.get(Keys.PG_USER),
        c.get(Keys.PG_PASSWORD), c.get(Keys.PG_SCHEMA), c.get(Keys.PG_SSL_MODE).trim(), c.get(Keys.PG_TLS_CA).trim(),
        c.getLong(Keys.PG_IDLE_TX_TIMEOUT_MS), "inspection-" + c.role().name().toLowerCase());
  }

  /** {@link #from}, and a pg.tls.ca that is set must be a readable PEM certificate file (start-up validation; reads the file). */
  public static PgOptions validated(Config c) {
    PgOptions o = from(c);
    if (!o.tlsCa().isEmpty()) Pem.certificates(Keys.PG_TLS_CA.name(), o.tlsCa());
    return o;
  }

  /** The same database under another application name (a dedicated session an operator should recognise). */
  public PgOptions named(String name) {
    return new PgOptions(host, port, database, user, password, schema, sslMode, tlsCa, idleTxTimeoutMs, name);
  }

  /** host:port/database, for messages (never the password). */
  public String where() {
    return host + ":" + port + "/" + database;
  }
}
