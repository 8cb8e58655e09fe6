package dev.inspection.admin;

import static dev.inspection.admin.Http.json;

import dev.inspection.scheduler.Operations;
import dev.inspection.scheduler.SlotMaps;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * The slot map (D11, issue 14 item 3): its versions, the map in force and a pending reshard with its
 * countdown ({@code GET /slot-map}, and {@code /probe/slot-map} for probes with their token); the leader
 * schedules a reshard with {@code POST /slot-map {"slots": N}}.
 */
public record SlotMapRoutes(SlotMaps maps, Operations operations) implements Routes {
  @Override
  public void mount(Router r) {
    r.get("/api/v1/slot-map").handler(ctx -> maps.status().onSuccess(m -> json(ctx, 200, m)).onFailure(ctx::fail));
    r.get("/api/v1/probe/slot-map").handler(ctx -> maps.forProbes().onSuccess(m -> json(ctx, 200, m)).onFailure(ctx::fail));
    r.post("/api/v1/slot-map").handler(this::schedule);
  }

  private void schedule(RoutingContext ctx) {
    // the contract (openapi.yaml, Reshard) has checked it: a whole number 1..4096
    operations.reshard(Http.bodyObject(ctx).getInteger("slots")).onSuccess(m -> json(ctx, 202, m)).onFailure(ctx::fail);
  }
}
