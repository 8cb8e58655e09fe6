package dev.inspection.store;

import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.SslMode;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.util.Map;

/** Builds PostgreSQL connections for one schema: every table name in the SQL is unqualified. */
public final class Db {
  private Db() {}

  public static PgConnectOptions connectOptions(PgOptions pg) {
    PgConnectOptions o = new PgConnectOptions()
        .setHost(pg.host())
        .setPort(pg.port())
        .setDatabase(pg.database())
        .setUser(pg.user())
        .setPassword(pg.password())
        .setReconnectAttempts(0)
        .setProperties(Map.of("search_path", pg.schema(), "application_name", pg.applicationName(),
            "idle_in_transaction_session_timeout", Long.toString(pg.idleTxTimeoutMs())));
    if (pg.ssl()) o.setSslMode(SslMode.REQUIRE);
    return o;
  }

  public static Pool pool(Vertx vertx, PgOptions pg, int size) {
    return PgBuilder.pool()
        .with(new PoolOptions().setMaxSize(size).setMaxWaitQueueSize(10_000).setConnectionTimeout(10)
            .setPoolCleanerPeriod(5000).setIdleTimeout(60))
        .connectingTo(connectOptions(pg))
        .using(vertx)
        .build();
  }
}
