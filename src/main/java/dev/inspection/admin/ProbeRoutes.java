package dev.inspection.admin;

import static dev.inspection.admin.Http.error;
import static dev.inspection.admin.Http.json;

import dev.inspection.scheduler.ClusterView;
import dev.inspection.scheduler.DeviceStore;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.function.Supplier;

/**
 * What probes pull with their group's token ({@code /probe/inventory}, {@code /probe/pacing}; {@link ApiAuth}
 * refuses another group's token) and what they report through Redis ({@code /probes}).
 *
 * @param reports each probe's latest report as kept in Redis
 * @param minWorkers the floor of the cold-start pacing
 */
public record ProbeRoutes(DeviceStore devices, ClusterView view, Supplier<Future<JsonArray>> reports, int minWorkers) implements Routes {
  @Override
  public void mount(Router r) {
    r.get("/api/v1/probe/inventory").handler(this::inventory);
    r.get("/api/v1/probe/pacing").handler(ctx -> view.pacing(minWorkers).onSuccess(p -> json(ctx, 200, p)).onFailure(ctx::fail));
    r.get("/api/v1/probes").handler(ctx -> reports.get().onSuccess(a -> json(ctx, 200, new JsonObject().put("probes", a)))
        .onFailure(e -> error(ctx, 503, "cannot read the probes' reports from Redis: check redis.url and Redis")));
  }

  private void inventory(RoutingContext ctx) {
    devices.page(Http.param(ctx, "group"), Http.param(ctx, "after"), Http.intParam(ctx, "limit")).onSuccess(p -> json(ctx, 200, p)).onFailure(ctx::fail);
  }
}
