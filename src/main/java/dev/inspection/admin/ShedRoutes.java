package dev.inspection.admin;

import static dev.inspection.admin.Http.json;

import dev.inspection.common.ApiError;
import dev.inspection.scheduler.ShedDesk;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.time.Clock;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;

/** {@code GET /api/v1/shed}: results probes shed at their outbox watermarks, per device-minute and priority (issue 12). */
public record ShedRoutes(ShedDesk shed, Clock clock) implements Routes {
  @Override
  public void mount(Router r) {
    r.get("/api/v1/shed").handler(this::shed);
  }

  private void shed(RoutingContext ctx) {
    OffsetDateTime to;
    OffsetDateTime from;
    try {
      to = ctx.queryParams().get("to") == null ? OffsetDateTime.ofInstant(clock.instant(), ZoneOffset.UTC).plusMinutes(1) : OffsetDateTime.parse(ctx.queryParams().get("to"));
      from = ctx.queryParams().get("from") == null ? to.minusHours(1) : OffsetDateTime.parse(ctx.queryParams().get("from"));
    } catch (DateTimeParseException e) {
      throw new ApiError(400, "from and to must be ISO-8601 instants with an offset, e.g. 2026-11-30T10:00:00Z");
    }
    if (!from.isBefore(to) || from.plusDays(7).isBefore(to)) throw new ApiError(400, "from must be before to, at most 7 days apart");
    String device = Http.param(ctx, "device");
    shed.query(device == null || device.isBlank() ? null : device, from, to, Http.intParam(ctx, "limit")).onSuccess(j -> json(ctx, 200, j)).onFailure(ctx::fail);
  }
}
