package dev.inspection.store;

import dev.inspection.common.Pem;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.TrustOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.SslMode;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.SqlConnection;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds PostgreSQL connections for one schema: every table name in the SQL is unqualified. Every
 * connection of the node (pools, the leader's lock session, a worker's liveness session) starts from
 * {@link #connectOptions}, so {@code pg.ssl.mode} and {@code pg.tls.ca} apply to all of them.
 */
public final class Db {
  private static final Logger log = LoggerFactory.getLogger(Db.class);
  private static final AtomicBoolean WARNED = new AtomicBoolean();
  /**
   * Each connection keeps its prepared statements (named, parsed once): without the cache every execution parsed and
   * planned its statement again, and the batch write's statements are long (the history and rollup CTE, ~3.5 kB).
   * The limit is above the longest statement the node runs, so none of them falls outside the cache. Each execution is
   * still planned for its own values ({@code plan_cache_mode=force_custom_plan}): with PostgreSQL's default, statements
   * switch to a generic plan after five executions, and the batch write's generic plans cost PostgreSQL 79 instead of
   * 52 µs/result at capacity and 139 instead of 79 in the half-rate run (./run.sh bench, one run each, 2026-12-04; a
   * generic plan over the partitioned history, rollup and alert tables cannot prune partitions when it is made); a small batch
   * transaction sets generic plans for itself (worker.generic.plan.max.results, {@code BatchStore.planMode}). A
   * change of a result column's type under a cached statement fails it once (0A000, an outage: the batch is requeued);
   * the client drops the statement and prepares it again.
   */
  static final int STATEMENT_CACHE_SIZE = 128;
  static final int STATEMENT_CACHE_SQL_LIMIT = 16_384;

  private Db() {}

  /** {@code base} with session settings added or replaced (a dedicated session: the leader lock, a liveness lock or its watch). */
  public static PgConnectOptions withSettings(PgConnectOptions base, Map<String, String> settings) {
    Map<String, String> props = new HashMap<>(base.getProperties());
    props.putAll(settings);
    return new PgConnectOptions(base).setProperties(props);
  }

  public static PgConnectOptions connectOptions(PgOptions pg) {
    PgConnectOptions o = new PgConnectOptions()
        .setHost(pg.host())
        .setPort(pg.port())
        .setDatabase(pg.database())
        .setUser(pg.user())
        .setPassword(pg.password())
        .setReconnectAttempts(0)
        .setCachePreparedStatements(true).setPreparedStatementCacheMaxSize(STATEMENT_CACHE_SIZE)
        .setPreparedStatementCacheSqlLimit(STATEMENT_CACHE_SQL_LIMIT)
        .setProperties(Map.of("search_path", pg.schema(), "application_name", pg.applicationName(),
            "idle_in_transaction_session_timeout", Long.toString(pg.idleTxTimeoutMs()), "plan_cache_mode", "force_custom_plan"));
    if (!pg.sslMode().equals("disable")) o.setSslMode(SslMode.of(pg.sslMode())).setSslOptions(sslOptions(pg));
    return o;
  }

  /**
   * libpq's meanings: verify-ca checks the certificate chain against {@code pg.tls.ca} (empty: the JVM's
   * trust store), verify-full also that the certificate names {@code pg.host}; require checks nothing
   * unless a CA is given (then the chain, like libpq with a root certificate) — it only encrypts.
   */
  static ClientSSLOptions sslOptions(PgOptions pg) {
    ClientSSLOptions s = new ClientSSLOptions().setHostnameVerificationAlgorithm(pg.sslMode().equals("verify-full") ? "HTTPS" : "");
    if (pg.sslMode().equals("require") && pg.tlsCa().isEmpty()) {
      if (WARNED.compareAndSet(false, true)) {
        log.warn("pg.ssl.mode=require encrypts but does not authenticate PostgreSQL ({}): set pg.ssl.mode=verify-full and pg.tls.ca", pg.where());
      }
      return s.setTrustAll(true);
    }
    return s.setTrustOptions(pg.tlsCa().isEmpty() ? TrustOptions.wrap(Pem.jvmTrustStore()) : new PemTrustOptions().addCertPath(pg.tlsCa()));
  }

  public static Pool pool(Vertx vertx, PgOptions pg, int size) {
    return pool(vertx, pg, size, PoolOptions.DEFAULT_NAME);
  }

  /**
   * {@code name}: the pool's {@code pool_name} in the Vert.x metrics; two pools of one process with the same name
   * register the same gauges twice (a WARN at every start of {@code --role=all}) and mix their figures. Its sessions
   * show in {@code pg_stat_activity} as {@code <application name>/<name>} ({@code inspection-worker/pg-worker}), so an
   * operator (and the bench's CPU split) tells the commit pool from the control and scheduler pools.
   */
  public static Pool pool(Vertx vertx, PgOptions pg, int size, String name) {
    return pool(vertx, pg, size, name, Map.of());
  }

  /** The same, each session with {@code settings} besides the common ones (the API's pool: its {@code lock_timeout}). */
  public static Pool pool(Vertx vertx, PgOptions pg, int size, String name, Map<String, String> settings) {
    return PgBuilder.pool()
        .with(new PoolOptions().setName(name).setMaxSize(size).setMaxWaitQueueSize(10_000).setConnectionTimeout(10)
            .setPoolCleanerPeriod(5000).setIdleTimeout(60))
        .connectingTo(withSettings(connectOptions(name.equals(PoolOptions.DEFAULT_NAME) ? pg : pg.named(pg.applicationName() + "/" + name)), settings))
        .using(vertx)
        .build();
  }

  /**
   * {@code pool.withTransaction(work)}, the connection's own failures logged: a connection without an exception
   * handler makes the SQL client print them bare on stderr, without a log header (PostgreSQL's FATAL 25P03
   * idle-in-transaction or 57P01 admin shutdown, connection resets). The transaction fails too and its caller handles that.
   */
  public static <T> Future<T> inTransaction(Pool pool, Function<SqlConnection, Future<T>> work) {
    return pool.withTransaction(conn -> {
      conn.exceptionHandler(Db::connectionFailed);
      return work.apply(conn);
    });
  }

  /** The exception handler of a connection held outside the pool's transactions (a session lock's). */
  public static void connectionFailed(Throwable e) {
    log.warn("a PostgreSQL connection in use failed: {}", e.getMessage() != null ? e.getMessage() : e.toString());
  }
}
