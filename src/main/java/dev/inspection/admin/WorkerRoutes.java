package dev.inspection.admin;

import static dev.inspection.admin.Http.error;
import static dev.inspection.admin.Http.json;

import dev.inspection.scheduler.ClusterView;
import dev.inspection.scheduler.Operations;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;

/** Workers: the list, one worker's detail, and the leader's drain and quarantine. */
public record WorkerRoutes(ClusterView view, Operations operations) implements Routes {
  @Override
  public void mount(Router r) {
    r.get("/api/v1/workers").handler(ctx -> view.workers()
        .onSuccess(a -> json(ctx, 200, new JsonObject().put("workers", a))).onFailure(ctx::fail));
    r.get("/api/v1/workers/:id").handler(ctx -> view.worker(ctx.pathParam("id")).onSuccess(w -> {
      if (w == null) error(ctx, 404, "unknown worker '" + ctx.pathParam("id") + "': GET /api/v1/workers lists them");
      else json(ctx, 200, w);
    }).onFailure(ctx::fail));
    r.post("/api/v1/workers/:id/drain").handler(ctx -> operations.drain(ctx.pathParam("id"))
        .onSuccess(w -> json(ctx, 202, w)).onFailure(ctx::fail));
    r.post("/api/v1/workers/:id/quarantine").handler(ctx -> operations.quarantine(ctx.pathParam("id"))
        .onSuccess(w -> json(ctx, 202, w)).onFailure(ctx::fail));
  }
}
