package dev.inspection.scheduler;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;

/**
 * The audit log (issue 10): one row per API mutation and console login — who, in which role, what, on
 * what, from which address, when, and the answer's status — read newest first, a page at a time.
 */
public final class AuditLog {
  static final String INSERT = "INSERT INTO audit_log (who, role, action, target, remote, status, outcome) VALUES ($1, $2, $3, $4, $5, $6, $7)";
  static final String PAGE = """
      SELECT id, at, who, role, action, target, remote, status, outcome FROM audit_log
      WHERE ($1::bigint IS NULL OR id < $1) ORDER BY id DESC LIMIT $2""";

  /** One entry; {@code status} is the HTTP status the request was answered with. */
  public record Entry(String who, String role, String action, String target, String remote, int status) {
    public String outcome() {
      return status < 400 ? "ok" : status < 500 ? "refused" : "failed";
    }
  }

  private final Pool pool;

  AuditLog(Pool pool) {
    this.pool = pool;
  }

  public Future<Void> write(Entry e) {
    return pool.preparedQuery(INSERT).execute(Tuple.of(cut(e.who(), 128), cut(e.role(), 16), cut(e.action(), 160), cut(e.target(), 512),
        cut(e.remote(), 64), e.status(), e.outcome())).mapEmpty();
  }

  /** Entries older than {@code before} (the newest when null), newest first; {@code next_before} pages on. */
  public Future<JsonObject> page(Long before, int limit) {
    return pool.preparedQuery(PAGE).execute(Tuple.of(before, limit)).map(rs -> {
      JsonArray a = new JsonArray();
      Long last = null;
      for (Row r : rs) {
        last = r.getLong(0);
        a.add(new JsonObject().put("id", last).put("at", r.getOffsetDateTime(1).toString()).put("who", r.getString(2)).put("role", r.getString(3))
            .put("action", r.getString(4)).put("target", r.getString(5)).put("remote", r.getString(6)).put("status", r.getInteger(7))
            .put("outcome", r.getString(8)));
      }
      return new JsonObject().put("entries", a).put("next_before", a.size() < limit ? null : last);
    });
  }

  private static String cut(String s, int max) {
    return s == null || s.length() <= max ? s : s.substring(0, max);
  }
}
