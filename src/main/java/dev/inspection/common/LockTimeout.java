package dev.inspection.common;

import io.vertx.sqlclient.DatabaseException;

/**
 * PostgreSQL's lock timeout (SQLSTATE 55P03, lock_not_available): a statement waited {@code lock_timeout} for a lock that
 * another session held (an operator's {@code VACUUM FULL}, {@code ALTER TABLE} or {@code LOCK TABLE}, a leader's row lock).
 * Read by the worker (a history write that gives up on a locked history) and by the HTTP layer (a request answered 503).
 */
public final class LockTimeout {
  public static final String SQLSTATE = "55P03";

  private LockTimeout() {}

  /** Whether {@code failure} or one of its causes is PostgreSQL's lock timeout. */
  public static boolean is(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof DatabaseException db && SQLSTATE.equals(db.getSqlState())) return true;
    }
    return false;
  }
}
