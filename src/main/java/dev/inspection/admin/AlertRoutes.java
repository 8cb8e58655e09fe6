package dev.inspection.admin;

import static dev.inspection.admin.Http.error;
import static dev.inspection.admin.Http.intParam;
import static dev.inspection.admin.Http.json;

import dev.inspection.scheduler.Operations;
import dev.inspection.scheduler.StateView;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/** Current alerts, most severe first, and the leader's acknowledgement of one. */
public record AlertRoutes(StateView state, Operations operations) implements Routes {
  @Override
  public void mount(Router r) {
    r.get("/api/v1/alerts").handler(this::alerts);
    r.post("/api/v1/alerts/:device/:key/ack").handler(this::ack);
  }

  private void alerts(RoutingContext ctx) {
    String wanted = Http.param(ctx, "state");
    state.alerts(wanted.equals("all") ? null : wanted, Http.param(ctx, "device"), intParam(ctx, "min_severity"), Http.param(ctx, "alert_key"),
            intParam(ctx, "limit"))
        .onSuccess(a -> json(ctx, 200, new JsonObject().put("alerts", a))).onFailure(ctx::fail);
  }

  private void ack(RoutingContext ctx) {
    JsonObject body = Http.bodyObject(ctx);
    String device = ctx.pathParam("device");
    String key = ctx.pathParam("key");
    operations.ackAlert(device, key, Http.who(ctx), body.getString("note")).onSuccess(a -> {
      if (a == null) error(ctx, 404, "device '" + device + "' has no alert '" + key + "': GET /api/v1/alerts?state=all lists them");
      else json(ctx, 200, a);
    }).onFailure(ctx::fail);
  }
}
