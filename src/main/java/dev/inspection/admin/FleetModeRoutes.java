package dev.inspection.admin;

import static dev.inspection.admin.Http.error;
import static dev.inspection.admin.Http.json;

import dev.inspection.scheduler.FleetModeKeeper;
import io.vertx.ext.web.Router;

/**
 * The fleet mode (issue 12, D10) from the database, the authority: {@code /fleet-mode} for operators (with
 * the last changes and, on the leader, the signals of its last sample) and {@code /probe/fleet-mode} for
 * probes with their token. When the database does not answer, 503: a probe then counts the scheduler as
 * unreachable rather than trust a copy.
 */
public record FleetModeRoutes(FleetModeKeeper fleet) implements Routes {
  @Override
  public void mount(Router r) {
    r.get("/api/v1/fleet-mode").handler(ctx -> fleet.read(Http.intParam(ctx, "history")).onSuccess(m -> json(ctx, 200, m))
        .onFailure(e -> error(ctx, 503, "cannot read the fleet mode from PostgreSQL: check the database (probes fall back to their own mode)")));
    r.get("/api/v1/probe/fleet-mode").handler(ctx -> fleet.readForProbe().onSuccess(m -> json(ctx, 200, m))
        .onFailure(e -> error(ctx, 503, "cannot read the fleet mode from PostgreSQL: check the database (probes fall back to their own mode)")));
  }
}
