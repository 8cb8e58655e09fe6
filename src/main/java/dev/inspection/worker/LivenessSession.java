package dev.inspection.worker;

import dev.inspection.common.Retry;
import dev.inspection.common.RetryPolicy;
import dev.inspection.control.Liveness;
import dev.inspection.store.Db;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.Tuple;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's liveness lock: {@code pg_try_advisory_lock(hashtext(namespace), hashtext(worker id))} held
 * by a dedicated, unpooled database session of this process. When the process dies the session ends and
 * the leader can take the lock: a crash is known in about a second, without waiting for heartbeats.
 * A lost session is taken again (the leader may declare this worker dead meanwhile).
 */
final class LivenessSession {
  private static final Logger log = LoggerFactory.getLogger(LivenessSession.class);

  static final String TRY_LIVENESS = "SELECT pg_try_advisory_lock(hashtext($1), hashtext($2))";

  private final Vertx vertx;
  private final PgConnectOptions options;
  private final String namespace;
  private final String workerId;
  private final Retry retry;
  private BooleanSupplier stopping = () -> true;
  private Runnable onHeld = () -> { };
  private PgConnection session;
  private boolean closed;

  LivenessSession(Vertx vertx, PgConnectOptions connectOptions, String schema, String workerId, RetryPolicy retryPolicy) {
    this.vertx = vertx;
    this.options = Db.withSettings(connectOptions, Map.of("application_name", "inspection-worker-liveness"));
    this.namespace = Liveness.namespace(schema);
    this.workerId = workerId;
    this.retry = new Retry(vertx, retryPolicy, log);
  }

  /**
   * Takes the lock in the background and again after every loss, until {@code stopping} says so or
   * {@link #close()}; {@code onHeld} runs each time it is held.
   */
  void start(BooleanSupplier stopping, Runnable onHeld) {
    this.stopping = stopping;
    this.onHeld = onHeld;
    acquire();
  }

  private boolean over() {
    return closed || stopping.getAsBoolean();
  }

  private void acquire() {
    if (over() || session != null) return;
    retry.until("hold the liveness lock of worker " + workerId, this::tryLock, e -> false, this::over).onSuccess(c -> {
      if (over()) {
        c.close();
        return;
      }
      session = c;
      c.exceptionHandler(Db::connectionFailed); // never printed bare by the SQL client; the close below is what counts
      c.closeHandler(v -> {
        if (session != c) return;
        session = null;
        if (!over()) {
          log.warn("worker {}: liveness session lost; taking the lock again (the leader may declare this worker dead meanwhile)", workerId);
          acquire();
        }
      });
      onHeld.run();
    });
  }

  private Future<PgConnection> tryLock() {
    return PgConnection.connect(vertx, options).compose(c -> c.preparedQuery(TRY_LIVENESS).execute(Tuple.of(namespace, workerId)).compose(rows -> {
      if (!rows.iterator().next().getBoolean(0)) {
        c.close();
        return Future.failedFuture(new IllegalStateException("the liveness lock of worker '" + workerId
            + "' is held by another session: another process with the same node.id is running (give each worker its own node.id),"
            + " or the leader is checking it right now"));
      }
      return Future.succeededFuture(c);
    }, e -> {
      c.close(); // the connection is of no use without the lock
      return Future.failedFuture(e);
    }));
  }

  /** A dead session shows up as a close (called with every heartbeat). */
  void ping() {
    if (session != null) session.query("SELECT 1").execute();
  }

  /** Ends the session, and with it the lock. */
  Future<Void> close() {
    closed = true;
    PgConnection c = session;
    session = null;
    return c == null ? Future.succeededFuture() : c.close();
  }
}
