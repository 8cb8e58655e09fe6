package dev.inspection.admin;

import static dev.inspection.admin.Http.error;
import static dev.inspection.admin.Http.json;

import dev.inspection.scheduler.Jobs;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/** A long operation's progress (import, dead-letter replay), from the node that runs it. */
public record JobRoutes(Jobs jobs) implements Routes {
  @Override
  public void mount(Router r) {
    r.get("/api/v1/jobs/:id").handler(this::job);
  }

  private void job(RoutingContext ctx) {
    Jobs.Job j = jobs.get(Long.parseLong(ctx.pathParam("id"))); // a whole number: the contract checked it
    if (j == null) error(ctx, 404, "no job " + ctx.pathParam("id") + " on this node (jobs live on the node that started them; the last 200 are kept)");
    else json(ctx, 200, j.toJson());
  }
}
