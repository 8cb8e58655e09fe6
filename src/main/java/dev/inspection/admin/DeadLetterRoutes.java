package dev.inspection.admin;

import static dev.inspection.admin.Http.json;

import dev.inspection.common.ApiError;
import dev.inspection.scheduler.DeadLetterDesk;
import dev.inspection.scheduler.Operations;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.Set;

/** Dead letters (D3): the list with counts by state and reason, and the leader's replay and discard. */
public record DeadLetterRoutes(DeadLetterDesk desk, Operations operations) implements Routes {
  @Override
  public void mount(Router r) {
    r.get("/api/v1/dead-letters").handler(this::list);
    r.post("/api/v1/dead-letters/replay").handler(ctx -> operations.replayDeadLetters(ids(ctx), Http.who(ctx))
        .onSuccess(job -> json(ctx, 202, new JsonObject().put("job_id", job.id()).put("job", job.toJson()))).onFailure(ctx::fail));
    r.post("/api/v1/dead-letters/discard").handler(this::discard);
  }

  private void list(RoutingContext ctx) {
    String state = Http.param(ctx, "state", "PENDING");
    if (state.equalsIgnoreCase("all")) state = null;
    else if (!Set.of("PENDING", "REPLAYED", "DISCARDED").contains(state)) throw new ApiError(400, "state must be PENDING, REPLAYED, DISCARDED or all");
    int limit = Http.intParam(ctx, "limit", 200, 1, 5000);
    desk.list(state, ctx.queryParams().get("reason"), limit).onSuccess(j -> json(ctx, 200, j)).onFailure(ctx::fail);
  }

  private void discard(RoutingContext ctx) {
    Long[] ids = ids(ctx);
    if (ids == null || ids.length == 0) throw new ApiError(400, "send {\"ids\": [...]}: discarding needs explicit ids");
    operations.discardDeadLetters(ids, Http.who(ctx)).onSuccess(n -> json(ctx, 200, new JsonObject().put("discarded", n))).onFailure(ctx::fail);
  }

  /** The body's dead-letter ids, null when it names none; a 400 when they are not numbers. */
  private static Long[] ids(RoutingContext ctx) {
    JsonArray a = Http.bodyObject(ctx).getJsonArray("ids");
    if (a == null) return null;
    Long[] out = new Long[a.size()];
    for (int i = 0; i < a.size(); i++) {
      if (!(a.getValue(i) instanceof Number n)) throw new ApiError(400, "ids must be a JSON array of dead-letter ids (numbers)");
      out[i] = n.longValue();
    }
    return out;
  }
}
