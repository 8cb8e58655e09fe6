package dev.inspection.admin;

import static dev.inspection.admin.Http.error;
import static dev.inspection.admin.Http.intParam;
import static dev.inspection.admin.Http.json;
import static dev.inspection.admin.Http.param;

import dev.inspection.common.ApiError;
import dev.inspection.inventory.Device;
import dev.inspection.inventory.TargetPolicy;
import dev.inspection.scheduler.DeviceStore;
import dev.inspection.scheduler.Operations;
import dev.inspection.scheduler.StateView;
import io.vertx.core.Future;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.time.Clock;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.List;

/**
 * Devices: bulk import (as a job with {@code ?async=true}), search, detail, PATCH, and one device's alerts and rollups.
 *
 * @param defaultIntervalMs the check interval of an imported device that names none
 */
public record DeviceRoutes(DeviceStore devices, StateView state, Operations operations, long defaultIntervalMs, Clock clock, TargetPolicy targets)
    implements Routes {
  @Override
  public void mount(Router r) {
    r.post("/api/v1/devices/import").handler(ctx -> operations.requireLeader().onFailure(ctx::fail).onSuccess(v -> importOnLeader(ctx)));
    r.get("/api/v1/devices").handler(this::search);
    r.get("/api/v1/devices/:id").handler(this::detail);
    r.patch("/api/v1/devices/:id").handler(this::update);
    r.get("/api/v1/devices/:id/alerts").handler(ctx -> state.events(ctx.pathParam("id"), 100)
        .onSuccess(a -> json(ctx, 200, new JsonObject().put("device_id", ctx.pathParam("id")).put("events", a))).onFailure(ctx::fail));
    r.get("/api/v1/devices/:id/rollups").handler(this::rollups);
  }

  private void importOnLeader(RoutingContext ctx) {
    String body = ctx.body().asString();
    if (body == null || body.isBlank()) {
      error(ctx, 400, "empty body: send a JSON array of devices or one device object per line");
      return;
    }
    JsonArray rejected = new JsonArray();
    // up to http.import.max.bytes of JSON: parsed on a worker thread, never on the event loop
    ctx.vertx().executeBlocking(() -> DeviceStore.parseImport(body, "default", defaultIntervalMs, rejected, targets), false)
        .onFailure(e -> {
          if (e instanceof DecodeException) error(ctx, 400, "the body is not a JSON array of devices nor one device object per line");
          else ctx.fail(e);
        })
        .onSuccess(parsed -> imported(ctx, parsed, rejected));
  }

  private void imported(RoutingContext ctx, List<Device> parsed, JsonArray rejected) {
    if (Boolean.TRUE.equals(ApiContract.query(ctx, "async"))) {
      operations.startImport(parsed, rejected.size())
          .onSuccess(job -> json(ctx, 202, new JsonObject().put("job_id", job.id()).put("rejected", rejected).put("job", job.toJson())))
          .onFailure(ctx::fail);
      return;
    }
    operations.importDevices(parsed)
        .onSuccess(v -> json(ctx, rejected.isEmpty() ? 200 : 207, new JsonObject().put("imported", parsed.size())
            .put("rejected", rejected).put("resource_version", v)))
        .onFailure(ctx::fail);
  }

  private void search(RoutingContext ctx) {
    devices.search(param(ctx, "q"), intParam(ctx, "limit")).onSuccess(a -> json(ctx, 200, new JsonObject().put("devices", a))).onFailure(ctx::fail);
  }

  private void detail(RoutingContext ctx) {
    String id = ctx.pathParam("id");
    int history = intParam(ctx, "history");
    devices.detail(id, history).onSuccess(d -> {
      if (d == null) error(ctx, 404, "unknown device '" + id + "': import it with POST /api/v1/devices/import");
      else json(ctx, 200, d);
    }).onFailure(ctx::fail);
  }

  private void update(RoutingContext ctx) {
    String id = ctx.pathParam("id");
    JsonObject patch = Http.bodyObject(ctx);
    // a target written as an address: refused here like on import (a host name is judged by the probe when resolved)
    String refused = patch.getValue("check_spec") instanceof JsonObject spec ? targets.refusalOfSpec(spec) : null;
    if (refused != null) throw new ApiError(400, refused);
    operations.updateDevice(id, patch)
        // a field the inventory refuses (DeviceStore#update) is the caller's to fix
        .recover(e -> Future.failedFuture(e instanceof IllegalArgumentException ? new ApiError(400, e.getMessage()) : e))
        .onSuccess(version -> {
          if (version == null) error(ctx, 404, "unknown device '" + id + "' in the inventory: add it with POST /api/v1/devices/import");
          else json(ctx, 200, new JsonObject().put("device_id", id).put("resource_version", version));
        }).onFailure(ctx::fail);
  }

  private void rollups(RoutingContext ctx) {
    OffsetDateTime to;
    OffsetDateTime from;
    try {
      to = ctx.queryParams().get("to") == null ? OffsetDateTime.ofInstant(clock.instant(), ZoneOffset.UTC) : OffsetDateTime.parse(ctx.queryParams().get("to"));
      from = ctx.queryParams().get("from") == null ? to.minusHours(1) : OffsetDateTime.parse(ctx.queryParams().get("from"));
    } catch (DateTimeParseException e) {
      throw new ApiError(400, "from and to must be ISO-8601 instants with an offset, e.g. 2026-11-30T10:00:00Z");
    }
    if (!from.isBefore(to) || from.plusDays(7).isBefore(to)) throw new ApiError(400, "from must be before to, at most 7 days apart");
    OffsetDateTime since = from;
    OffsetDateTime until = to;
    state.rollups(ctx.pathParam("id"), from, to).onSuccess(a -> json(ctx, 200, new JsonObject().put("device_id", ctx.pathParam("id"))
        .put("from", since.toString()).put("to", until.toString()).put("minutes", a))).onFailure(ctx::fail);
  }
}
