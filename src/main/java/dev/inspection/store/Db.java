package dev.inspection.store;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.SslMode;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.util.Map;
import java.util.regex.Pattern;

/** Builds PostgreSQL connections for one schema: every table name in the SQL is unqualified. */
public final class Db {
  private static final Pattern SCHEMA = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

  private Db() {}

  public static String schema(Config config) {
    String s = config.get(Keys.PG_SCHEMA);
    if (!SCHEMA.matcher(s).matches()) {
      throw new ConfigException("pg.schema '" + s + "' is not a plain lower-case identifier ([a-z_][a-z0-9_]*)");
    }
    return s;
  }

  public static PgConnectOptions connectOptions(Config config) {
    PgConnectOptions o = new PgConnectOptions()
        .setHost(config.get(Keys.PG_HOST))
        .setPort(config.getInt(Keys.PG_PORT))
        .setDatabase(config.get(Keys.PG_DATABASE))
        .setUser(config.get(Keys.PG_USER))
        .setPassword(config.get(Keys.PG_PASSWORD))
        .setReconnectAttempts(0)
        .setProperties(Map.of("search_path", schema(config), "application_name", "inspection-" + config.role().name().toLowerCase(),
            "idle_in_transaction_session_timeout", Long.toString(config.getLong(Keys.PG_IDLE_TX_TIMEOUT_MS))));
    if (config.getBool(Keys.PG_SSL)) o.setSslMode(SslMode.REQUIRE);
    return o;
  }

  public static Pool pool(Vertx vertx, Config config, int size) {
    return PgBuilder.pool()
        .with(new PoolOptions().setMaxSize(size).setMaxWaitQueueSize(10_000).setConnectionTimeout(10)
            .setPoolCleanerPeriod(5000).setIdleTimeout(60))
        .connectingTo(connectOptions(config))
        .using(vertx)
        .build();
  }
}
