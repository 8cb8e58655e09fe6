package dev.inspection.admin;

import dev.inspection.common.ApiError;
import dev.inspection.common.DbWaits;
import io.vertx.core.Handler;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place a failed request becomes its JSON error body: an {@link ApiError} with its status and
 * details, a body that is not JSON a 400, a body over its route's limit a 413; anything else is logged
 * with its detail and the request id, and answered with a generic message that carries the request id
 * and nothing of the internals (issue 10). A statement that gave up waiting for a lock ({@code api.lock.timeout.ms}), or a
 * request that found no free database connection in time, is a 503 that says so, with {@code Retry-After}.
 */
final class FailureHandler implements Handler<RoutingContext> {
  private static final Logger log = LoggerFactory.getLogger(FailureHandler.class);

  @Override
  public void handle(RoutingContext ctx) {
    Throwable t = ctx.failure();
    String id = Frontline.requestId(ctx);
    if (t instanceof ApiError a) {
      Http.json(ctx, a.status, a.details.copy().put("error", a.getMessage()).put("status", a.status));
    } else if (t instanceof DecodeException) {
      Http.error(ctx, 400, "the body is not valid JSON: send a JSON object (application/json)");
    } else if (t == null && ctx.statusCode() == 413) {
      Http.error(ctx, 413, "the body is too large for " + ctx.request().method() + " " + ctx.normalizedPath()
          + " (http.body.max.bytes; http.import.max.bytes for the import)");
    } else if (DbWaits.isLockTimeout(t)) {
      retryLater(ctx, id, t, "a table this request needs is locked by another session (an operator's VACUUM FULL, ALTER TABLE or LOCK TABLE,"
          + " say), and the request gave up after api.lock.timeout.ms: retry once it ends; pg_locks and pg_stat_activity show who holds it");
    } else if (DbWaits.isPoolTimeout(t)) {
      retryLater(ctx, id, t, "every database connection this request could use stayed busy for 10 s (requests waiting on a locked table,"
          + " or a database slower than the load): retry shortly; pg_locks and pg_stat_activity show who holds a lock");
    } else if (t == null && ctx.statusCode() >= 400 && ctx.statusCode() < 500) {
      Http.error(ctx, ctx.statusCode(), "request refused (" + ctx.statusCode() + ")");
    } else {
      int status = ctx.statusCode() >= 500 ? ctx.statusCode() : 500;
      log.warn("request {}: {} {} failed with {}", id, ctx.request().method(), ctx.request().path(), t == null ? status : t.toString(), t);
      if (ctx.response().ended()) return;
      Http.json(ctx, status, new JsonObject().put("error", "internal error (request id " + id
          + "): check /health/ready and retry; the node's log has the detail under this id").put("status", status).put("request_id", id));
    }
  }

  /** A request the database made wait too long: 503 with {@code Retry-After}, logged at INFO (it is not the node's fault). */
  private static void retryLater(RoutingContext ctx, String id, Throwable t, String message) {
    log.info("request {}: {} {} answered 503 ({})", id, ctx.request().method(), ctx.request().path(), t.getMessage());
    if (!ctx.response().headWritten()) ctx.response().putHeader("Retry-After", "10");
    Http.error(ctx, 503, message);
  }
}
