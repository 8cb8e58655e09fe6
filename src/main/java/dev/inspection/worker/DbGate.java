package dev.inspection.worker;

import dev.inspection.common.Retry;
import dev.inspection.common.RetryPolicy;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * After a database error every slot waits here instead of retrying on its own: one probe query, retried
 * through {@link Retry}, and every waiting slot resumes when it answers. Consumers stay closed
 * meanwhile, so messages wait in RabbitMQ (not in memory) and their delivery count grows by one per
 * outage, not by one per retry.
 */
public final class DbGate {
  private static final Logger log = LoggerFactory.getLogger(DbGate.class);
  private final Pool pool;
  private final Retry retry;
  private Promise<Void> waiting;
  private long downSince;

  public DbGate(Vertx vertx, Pool pool, RetryPolicy retryPolicy) {
    this.pool = pool;
    this.retry = new Retry(vertx, retryPolicy, log);
  }

  public boolean healthy() {
    return waiting == null;
  }

  /** Reports a failure; the future completes once PostgreSQL answers again. */
  public Future<Void> failed(Throwable cause) {
    if (waiting == null) {
      waiting = Promise.promise();
      downSince = System.currentTimeMillis();
      log.warn("database error ({}); pausing consumption until PostgreSQL answers", cause.getMessage());
      retry.afterPause("reach PostgreSQL", () -> pool.query("SELECT 1").execute()).onSuccess(r -> {
        log.info("PostgreSQL answers again after {} ms; resuming consumption", System.currentTimeMillis() - downSince);
        Promise<Void> p = waiting;
        waiting = null;
        p.complete();
      });
    }
    return waiting.future();
  }
}
