package dev.inspection.worker;

import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.DatabaseException;

/**
 * What a failed batch transaction means, read from PostgreSQL's SQLSTATE (DESIGN.md D9). Pure: no I/O.
 * <ul>
 *   <li>{@link Kind#OUTAGE}: PostgreSQL cannot take writes right now, or the failure says nothing about the
 *       rows — connection (08), resources (53: disk full, out of memory, too many connections), operator
 *       intervention and shutdown (57P), system and internal errors (58, XX), a schema or statement that does
 *       not fit the code (42, 0A, 3F …), every other class, and no SQLSTATE at all (a closed connection, a
 *       pool timeout). Requeue and pause until it answers: waiting can fix these, dead-lettering cannot;</li>
 *   <li>{@link Kind#RETRY}: the transaction lost a race and the same rows may well commit at once —
 *       serialization failure (40001), deadlock (40P01), lock or statement timeout (55P03, 57014). Tried
 *       again soon, a few times, before it counts as an outage;</li>
 *   <li>{@link Kind#POISON}: PostgreSQL refuses these rows whatever the moment — data exceptions (22: a
 *       {@code \u0000} in a jsonb string is 22P05, a value out of range 22003/22008, a string too long 22001),
 *       integrity constraints (23), cardinality (21), triggered-data-change and check-option violations (27,
 *       44), program limits such as an index row too large (54), PL/pgSQL raises (P0) and 40002 (an
 *       integrity constraint at commit). The group is split to find the rows and only they are set aside.</li>
 * </ul>
 */
public final class DbErrors {
  private DbErrors() {}

  static final int MAX_MESSAGE = 400;

  public enum Kind { OUTAGE, RETRY, POISON }

  /** A classified failure: its kind, the SQLSTATE ({@code null}: none) and what PostgreSQL (or the client) said. */
  public record DbError(Kind kind, String sqlState, String message) {
    /** For logs and dead-letter details: {@code SQLSTATE 23514: new row … violates check constraint …}. */
    public String describe() {
      return (sqlState == null ? "no SQLSTATE" : "SQLSTATE " + sqlState) + ": " + message;
    }
  }

  /** The kind of a SQLSTATE; {@code null} or a malformed one is an outage (nothing says the rows are at fault). */
  public static Kind classify(String sqlState) {
    if (sqlState == null || sqlState.length() != 5) return Kind.OUTAGE;
    switch (sqlState) {
      case "40001", "40P01", "55P03", "57014":
        return Kind.RETRY;
      case "40002":
        return Kind.POISON;
      default:
        break;
    }
    return switch (sqlState.substring(0, 2)) {
      case "21", "22", "23", "27", "44", "54", "P0" -> Kind.POISON;
      default -> Kind.OUTAGE;
    };
  }

  /** Classifies a failure: the first {@link DatabaseException} among its causes gives the SQLSTATE. */
  public static DbError of(Throwable failure) {
    DatabaseException db = cause(failure, DatabaseException.class);
    if (db != null) {
      String message = db instanceof PgException pg && pg.getErrorMessage() != null ? pg.getErrorMessage() + detail(pg) : db.getMessage();
      return new DbError(classify(db.getSqlState()), db.getSqlState(), shorten(message));
    }
    String message = failure == null ? "unknown error" : failure.getMessage() != null ? failure.getMessage() : failure.getClass().getSimpleName();
    return new DbError(Kind.OUTAGE, null, shorten(message));
  }

  /**
   * Whether {@code failure} is a unique violation (23505) on a partition of {@code device_status_history} or of
   * {@code device_status_rollup_1m}: a batch written fresh ({@link HistoryRollups#WRITE_FRESH}) held a result history has (a
   * redelivery, a replay) or a rollup row its planner took for new, and is written again with the insert-or-ignore and the upsert.
   * Any other unique violation is not.
   */
  public static boolean isFreshDuplicate(Throwable failure) {
    PgException pg = cause(failure, PgException.class);
    return pg != null && "23505".equals(pg.getSqlState()) && pg.getTable() != null
        && (pg.getTable().startsWith("device_status_history") || pg.getTable().startsWith("device_status_rollup_1m"));
  }

  /** The first of {@code failure} and its causes that is a {@code type}; null if none is. */
  private static <T extends Throwable> T cause(Throwable failure, Class<T> type) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (type.isInstance(t)) return type.cast(t);
    }
    return null;
  }

  /** A detail may quote the whole failing row (a 64 KiB payload): logs and dead-letter headers get its start. */
  static String shorten(String s) {
    return s == null || s.length() <= MAX_MESSAGE ? s : s.substring(0, MAX_MESSAGE) + "…";
  }

  private static String detail(PgException pg) {
    StringBuilder b = new StringBuilder();
    if (pg.getDetail() != null) b.append(" (").append(pg.getDetail()).append(')');
    if (pg.getConstraint() != null) b.append(" [constraint ").append(pg.getConstraint()).append(']');
    return b.toString();
  }
}
