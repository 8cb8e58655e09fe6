package dev.inspection.admin;

import static dev.inspection.admin.Http.json;

import dev.inspection.common.HealthCheck;
import dev.inspection.metrics.Metrics;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;

/** {@code /health/live}, {@code /health/ready} (the role's dependency checks) and {@code /metrics}: open on every role. */
final class HealthRoutes implements Routes {
  private final Metrics metrics;
  private final Map<String, BooleanSupplier> readiness;

  HealthRoutes(Metrics metrics, Map<String, BooleanSupplier> readiness) {
    this.metrics = metrics;
    this.readiness = new LinkedHashMap<>(readiness);
  }

  @Override
  public void mount(Router r) {
    r.get("/health/live").handler(ctx -> json(ctx, 200, new JsonObject().put("status", "UP")));
    r.get("/health/ready").handler(this::ready);
    r.get("/metrics").handler(ctx -> ctx.response().putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8").end(metrics.scrape()));
  }

  private void ready(RoutingContext ctx) {
    JsonObject checks = new JsonObject();
    JsonObject reasons = new JsonObject();
    JsonObject details = new JsonObject();
    boolean all = true;
    for (Map.Entry<String, BooleanSupplier> e : readiness.entrySet()) {
      boolean ok = e.getValue().getAsBoolean();
      all &= ok;
      checks.put(e.getKey(), ok ? "UP" : "DOWN");
      if (!ok && e.getValue() instanceof HealthCheck h && h.reason() != null) reasons.put(e.getKey(), h.reason());
      if (e.getValue() instanceof DetailedCheck d) details.put(e.getKey(), d.details().get());
    }
    JsonObject body = new JsonObject().put("status", all ? "UP" : "DOWN").put("checks", checks);
    if (!reasons.isEmpty()) body.put("reasons", reasons);
    if (!details.isEmpty()) body.put("details", details);
    json(ctx, all ? 200 : 503, body);
  }
}
