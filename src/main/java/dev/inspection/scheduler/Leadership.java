package dev.inspection.scheduler;

import dev.inspection.store.Db;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader election (D2). The leader holds {@code pg_try_advisory_lock} on one dedicated, unpooled
 * connection; the lock lives exactly as long as that database session. The session has an
 * {@code idle_session_timeout}, and the leader pings it: a leader that pauses (SIGSTOP, a long GC) goes
 * silent, PostgreSQL ends the session and the lock passes on. Losing the connection for any reason
 * means stepping down at once.
 *
 * <p>Each new leader increments {@code scheduler_term}. Every leader write runs through
 * {@link #fenced}: the transaction first reads the term row {@code FOR SHARE} and gives up unless it is
 * still this leader's term. A new leader's increment waits for such a transaction and every later one
 * sees the new term, so a deposed leader that wakes up late changes nothing.
 *
 * <p>{@link #fenced} may be called from any context (the HTTP API's, for one); the election state and the
 * listener are only ever touched on the context this was made on, so a step-down noticed elsewhere hops
 * there first.
 */
public final class Leadership {
  private static final Logger log = LoggerFactory.getLogger(Leadership.class);

  static final String TRY_LOCK = "SELECT pg_try_advisory_lock(hashtext($1))";
  static final String NEW_TERM = """
      UPDATE scheduler_term SET term = term + 1, leader_id = $1, leader_url = $2, elected_at = now() WHERE id = 1 RETURNING term""";
  static final String CHECK_TERM = "SELECT term FROM scheduler_term WHERE id = 1 FOR SHARE";

  /** A leader write found that a newer leader exists: nothing was written. */
  public static final class Deposed extends RuntimeException {
    public Deposed(long mine, long current) {
      super("leader term " + mine + " is over (current term " + current + "): this node no longer leads");
    }
  }

  /** What the scheduler learns about its own leadership. */
  public interface Listener {
    void elected(long term);

    void deposed(String why);
  }

  private final Vertx vertx;
  private final Context context;
  private final PgConnectOptions options;
  private final Pool pool;
  private final String nodeId;
  private final String lockName;
  private final Supplier<String> apiUrl;
  private final long intervalMs;
  private final long lockTimeoutMs;
  private final Listener listener;
  private PgConnection conn;
  private boolean connecting;
  /** An election attempt is waiting for its answer: a tick must not start a second one on the same session. */
  private boolean campaigning;
  private volatile long term = -1;
  private boolean stopped;
  private long timer = -1;
  private String writtenUrl;
  private final SessionPing ping;
  /** Election ticks a ping may stay unanswered (ticks of this process that came on time: see {@link SessionPing}). */
  static final int PING_PATIENCE = 3;

  public Leadership(Vertx vertx, PgConnectOptions base, long sessionTimeoutMs, Pool pool, String nodeId, String schema,
      Supplier<String> apiUrl, long intervalMs, long lockTimeoutMs, Listener listener) {
    this.lockTimeoutMs = lockTimeoutMs;
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
    this.options = Db.withSettings(base, Map.of("idle_session_timeout", Long.toString(sessionTimeoutMs), "application_name", "inspection-leader-lock"));
    this.pool = pool;
    this.nodeId = nodeId;
    this.lockName = "inspection.leader." + schema;
    this.apiUrl = apiUrl;
    this.intervalMs = intervalMs;
    this.listener = listener;
    this.ping = new SessionPing(intervalMs, PING_PATIENCE);
  }

  public boolean leading() {
    return term > 0;
  }

  public long term() {
    return term;
  }

  /** Starts campaigning (and, once elected, pinging); nothing once {@link #stop} has run. */
  public void start() {
    if (Vertx.currentContext() != context) {
      context.runOnContext(v -> start());
      return;
    }
    if (stopped || timer >= 0) return;
    timer = vertx.setPeriodic(200, intervalMs, t -> tick());
  }

  private void tick() {
    if (stopped) return;
    if (conn == null) {
      connect();
    } else if (term > 0) {
      // the ping keeps the session from idling out and finds a dead connection within a few intervals
      PgConnection lock = conn;
      switch (ping.tick(System.nanoTime() / 1_000_000)) {
        case SEND -> lock.query("SELECT 1").execute().onComplete(ar -> {
          if (conn != lock) return;
          if (ar.succeeded()) ping.answered(System.nanoTime() / 1_000_000);
          else lost("the lock connection failed a ping (" + ar.cause().getMessage() + ")");
        });
        case LOST -> lost("the lock connection has not answered a ping for " + PING_PATIENCE * intervalMs + " ms");
        case WAIT -> { }
      }
      String url = apiUrl.get();
      if (!url.equals(writtenUrl)) {
        // elected before the HTTP server listened: publish where followers should send mutations
        fenced(c -> c.preparedQuery("UPDATE scheduler_term SET leader_url = $1 WHERE id = 1").execute(Tuple.of(url)))
            .onSuccess(r -> writtenUrl = url);
      }
    } else {
      campaign();
    }
  }

  private void connect() {
    if (connecting) return;
    connecting = true;
    PgConnection.connect(vertx, options).onComplete(ar -> {
      connecting = false;
      if (ar.failed()) {
        log.debug("leader election: cannot connect ({})", ar.cause().getMessage());
        return;
      }
      if (stopped) {
        ar.result().close();
        return;
      }
      PgConnection c = ar.result();
      conn = c;
      ping.reset();
      c.closeHandler(v -> {
        if (conn == c) lost("the lock connection closed");
      });
      // e.g. FATAL: terminating connection due to idle-session timeout — the real reason of a step-down
      c.exceptionHandler(e -> {
        if (conn == c) lost("the lock connection failed: " + e.getMessage());
      });
      campaign();
    });
  }

  private void campaign() {
    PgConnection c = conn;
    if (c == null || term > 0 || campaigning) return;
    // advisory locks are re-entrant on one session: a second attempt while the first still waits would
    // take the lock again and raise the term a second time for the same leader
    campaigning = true;
    // the URL written with the term: the HTTP server may start listening while the election runs, and the
    // tick must then see that what was written differs from the current URL
    String url = apiUrl.get();
    c.preparedQuery(TRY_LOCK).execute(Tuple.of(lockName)).compose(rows -> {
      if (!rows.iterator().next().getBoolean(0)) return Future.succeededFuture(-1L);
      // the term is raised on the lock's own session: if that session is gone, so is the claim
      return c.preparedQuery(NEW_TERM).execute(Tuple.of(nodeId, url)).map(r -> r.iterator().next().getLong(0));
    }).onSuccess(t -> {
      if (t > 0 && conn == c && !stopped) {
        term = t;
        writtenUrl = url;
        log.info("node {} is the scheduler leader (term {})", nodeId, t);
        listener.elected(t);
      }
    }).onFailure(e -> log.debug("leader election attempt failed: {}", e.getMessage()))
        .onComplete(ar -> campaigning = false);
  }

  private void lost(String why) {
    if (Vertx.currentContext() != context) {
      context.runOnContext(v -> lost(why));
      return;
    }
    PgConnection c = conn;
    conn = null;
    if (c != null) c.close();
    if (term > 0) {
      long was = term;
      term = -1;
      // the session's last moments tell a stall of this process (late ticks) from a silent connection or server
      log.warn("node {} steps down as scheduler leader (term {}): {} ({})", nodeId, was, why, ping.describe(System.nanoTime() / 1_000_000));
      listener.deposed(why);
    }
  }

  /** Runs a leader write in a transaction that commits only while this node's term is current. */
  public <T> Future<T> fenced(Function<SqlConnection, Future<T>> work) {
    long mine = term;
    if (mine <= 0) return Future.failedFuture(new Deposed(mine, -1));
    // a write waits at most lockTimeoutMs for a row lock (a batch of a paused worker): the round fails and is retried
    return Db.inTransaction(pool, c -> c.query("SET LOCAL lock_timeout = " + lockTimeoutMs).execute()
        .compose(v -> c.query(CHECK_TERM).execute()).compose(rows -> {
      long current = rows.iterator().next().getLong(0);
      if (current != mine) return Future.failedFuture(new Deposed(mine, current));
      return work.apply(c);
    })).onFailure(e -> {
      if (e instanceof Deposed) context.runOnContext(v -> {
        // still the term that found itself deposed: a step-down and new election meanwhile must not be undone
        if (term == mine) lost(e.getMessage());
      });
    });
  }

  /** Steps down (closing the session releases the lock) and stops campaigning. */
  public Future<Void> stop() {
    if (Vertx.currentContext() != context) return Future.future(p -> context.runOnContext(v -> stop().onComplete(p)));
    stopped = true;
    vertx.cancelTimer(timer);
    PgConnection c = conn;
    conn = null;
    if (term > 0) {
      term = -1;
      listener.deposed("node stopping");
    }
    return c == null ? Future.succeededFuture() : c.close();
  }
}
