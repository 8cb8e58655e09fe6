package dev.inspection.admin;

import static dev.inspection.admin.Http.json;

import dev.inspection.scheduler.DeadLetterDesk;
import dev.inspection.scheduler.Operations;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

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
    String state = Http.param(ctx, "state");
    desk.list(state.equals("all") ? null : state, Http.param(ctx, "reason"), Http.intParam(ctx, "limit")).onSuccess(j -> json(ctx, 200, j)).onFailure(ctx::fail);
  }

  private void discard(RoutingContext ctx) {
    operations.discardDeadLetters(ids(ctx), Http.who(ctx)).onSuccess(n -> json(ctx, 200, new JsonObject().put("discarded", n))).onFailure(ctx::fail);
  }

  /** The body's dead-letter ids (numbers: the contract checked them), null when it names none. */
  private static Long[] ids(RoutingContext ctx) {
    JsonArray a = Http.bodyObject(ctx).getJsonArray("ids");
    if (a == null) return null;
    Long[] out = new Long[a.size()];
    for (int i = 0; i < a.size(); i++) out[i] = ((Number) a.getValue(i)).longValue();
    return out;
  }
}
