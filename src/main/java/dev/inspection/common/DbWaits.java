package dev.inspection.common;

import io.vertx.core.VertxException;
import io.vertx.sqlclient.DatabaseException;

/**
 * Failures that say the database made a caller wait too long rather than refuse it: PostgreSQL's lock timeout (SQLSTATE
 * 55P03, lock_not_available: a statement waited {@code lock_timeout} for a lock another session held, such as an operator's
 * {@code VACUUM FULL}, {@code ALTER TABLE} or {@code LOCK TABLE}) and a pool's wait for a free connection (every connection
 * busy, often each one waiting on such a lock). Read by the worker (a history write that gives up on a locked history)
 * and by the HTTP layer (a request answered 503, to be retried).
 */
public final class DbWaits {
  public static final String LOCK_TIMEOUT = "55P03";
  /** The Vert.x SQL client's message when no connection of a pool came free within its connection timeout. */
  static final String POOL_TIMEOUT = "Timeout waiting for connection";

  private DbWaits() {}

  /** Whether {@code failure} or one of its causes is PostgreSQL's lock timeout. */
  public static boolean isLockTimeout(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof DatabaseException db && LOCK_TIMEOUT.equals(db.getSqlState())) return true;
    }
    return false;
  }

  /** Whether {@code failure} is a pool's connection timeout: no connection came free in time. */
  public static boolean isPoolTimeout(Throwable failure) {
    return failure instanceof VertxException v && POOL_TIMEOUT.equals(v.getMessage());
  }
}
