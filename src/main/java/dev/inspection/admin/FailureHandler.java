package dev.inspection.admin;

import dev.inspection.common.ApiError;
import io.vertx.core.Handler;
import io.vertx.core.json.DecodeException;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place a failed request becomes its JSON error body: an {@link ApiError} with its status and
 * details, a body that is not JSON a 400, anything else its status (503 when it has none) with a hint.
 */
final class FailureHandler implements Handler<RoutingContext> {
  private static final Logger log = LoggerFactory.getLogger(FailureHandler.class);

  @Override
  public void handle(RoutingContext ctx) {
    Throwable t = ctx.failure();
    if (t instanceof ApiError a) {
      Http.json(ctx, a.status, a.details.copy().put("error", a.getMessage()).put("status", a.status));
    } else if (t instanceof DecodeException) {
      Http.error(ctx, 400, "the body is not valid JSON: " + t.getMessage());
    } else {
      log.warn("{} {} failed: {}", ctx.request().method(), ctx.request().path(), t == null ? ctx.statusCode() : t.toString());
      Http.error(ctx, ctx.statusCode() > 0 ? ctx.statusCode() : 503, t == null ? "request failed"
          : "request failed: " + t.getMessage() + " — check /health/ready and retry");
    }
  }
}
