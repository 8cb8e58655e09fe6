package dev.inspection.admin;

import static dev.inspection.admin.Http.json;

import dev.inspection.scheduler.ClusterView;
import dev.inspection.scheduler.QueueSampler;
import io.vertx.ext.web.Router;
import io.vertx.core.json.JsonObject;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** The cluster at a glance: {@code /overview}, {@code /versions}, {@code /leader}. */
public record OverviewRoutes(ClusterView view, QueueSampler queues, BooleanSupplier leading, Supplier<JsonObject> fleetMode) implements Routes {
  @Override
  public void mount(Router r) {
    r.get("/api/v1/overview").handler(ctx -> view.overview()
        .onSuccess(o -> json(ctx, 200, o.put("backlog_total", queues.total()).put("this_node_leads", leading.getAsBoolean())
            .put("fleet_mode", fleetMode.get())))
        .onFailure(ctx::fail));
    r.get("/api/v1/versions").handler(ctx -> view.versions().onSuccess(v -> json(ctx, 200, v)).onFailure(ctx::fail));
    r.get("/api/v1/leader").handler(ctx -> view.leader()
        .onSuccess(l -> json(ctx, 200, l.put("this_node_leads", leading.getAsBoolean()))).onFailure(ctx::fail));
  }
}
