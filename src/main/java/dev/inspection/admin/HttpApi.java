package dev.inspection.admin;

import dev.inspection.metrics.Metrics;
import dev.inspection.node.Config;
import dev.inspection.node.Keys;
import dev.inspection.scheduler.DeviceStore;
import dev.inspection.scheduler.SchedulerVerticle;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP server every role serves: {@code /health/live}, {@code /health/ready}, {@code /metrics}, and
 * on the scheduler role the {@code /api/v1} routes. Errors are JSON with a message that says what to do.
 */
public final class HttpApi extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(HttpApi.class);

  private final Config config;
  private final Metrics metrics;
  private final Map<String, BooleanSupplier> readiness;
  private final Supplier<DeviceStore> devices;
  private final Supplier<SchedulerVerticle> scheduler;
  private HttpServer server;

  public HttpApi(Config config, Metrics metrics, Map<String, BooleanSupplier> readiness, Supplier<SchedulerVerticle> scheduler) {
    this.config = config;
    this.metrics = metrics;
    this.readiness = new LinkedHashMap<>(readiness);
    this.scheduler = scheduler;
    this.devices = scheduler == null ? null : () -> scheduler.get().devices();
  }

  public int port() {
    return server == null ? -1 : server.actualPort();
  }

  @Override
  public Future<?> start() {
    Router r = Router.router(vertx);
    r.get("/health/live").handler(ctx -> json(ctx, 200, new JsonObject().put("status", "UP")));
    r.get("/health/ready").handler(this::ready);
    r.get("/metrics").handler(ctx -> ctx.response().putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8").end(metrics.scrape()));
    if (devices != null) {
      r.route("/api/v1/*").handler(BodyHandler.create().setBodyLimit(256L * 1024 * 1024));
      r.post("/api/v1/devices/import").handler(this::importDevices);
      r.get("/api/v1/devices/:id").handler(this::device);
      r.get("/api/v1/probe/inventory").handler(this::inventory);
      r.get("/api/v1/slots").handler(ctx -> devices.get().slots().onSuccess(a -> json(ctx, 200, new JsonObject().put("slots", a))).onFailure(ctx::fail));
      r.get("/api/v1/alerts").handler(this::alerts);
      r.get("/api/v1/devices/:id/alerts").handler(ctx -> scheduler.get().state().events(ctx.pathParam("id"), 100)
          .onSuccess(a -> json(ctx, 200, new JsonObject().put("device_id", ctx.pathParam("id")).put("events", a))).onFailure(ctx::fail));
      r.get("/api/v1/devices/:id/rollups").handler(this::rollups);
      r.get("/api/v1/leader").handler(ctx -> scheduler.get().view().leader()
          .onSuccess(l -> json(ctx, 200, l.put("this_node_leads", scheduler.get().leading()))).onFailure(ctx::fail));
      r.get("/api/v1/workers").handler(ctx -> scheduler.get().view().workers()
          .onSuccess(a -> json(ctx, 200, new JsonObject().put("workers", a))).onFailure(ctx::fail));
      r.get("/api/v1/workers/:id").handler(ctx -> scheduler.get().view().worker(ctx.pathParam("id")).onSuccess(w -> {
        if (w == null) error(ctx, 404, "unknown worker '" + ctx.pathParam("id") + "': GET /api/v1/workers lists them");
        else json(ctx, 200, w);
      }).onFailure(ctx::fail));
      r.post("/api/v1/workers/:id/drain").handler(ctx -> scheduler.get().drain(ctx.pathParam("id"))
          .onSuccess(w -> json(ctx, 202, w)).onFailure(ctx::fail));
      r.get("/api/v1/probe/pacing").handler(ctx -> scheduler.get().view().pacing(scheduler.get().minWorkers())
          .onSuccess(p -> json(ctx, 200, p)).onFailure(ctx::fail));
    }
    r.route().last().handler(ctx -> error(ctx, 404, "no route " + ctx.request().method() + " " + ctx.request().path()
        + ": see the README for the API"));
    r.route().failureHandler(ctx -> {
      Throwable t = ctx.failure();
      if (t instanceof ApiError a) {
        json(ctx, a.status, a.details.copy().put("error", a.getMessage()).put("status", a.status));
      } else if (t instanceof DecodeException) {
        error(ctx, 400, "the body is not valid JSON: " + t.getMessage());
      } else {
        log.warn("{} {} failed: {}", ctx.request().method(), ctx.request().path(), t == null ? ctx.statusCode() : t.toString());
        error(ctx, ctx.statusCode() > 0 ? ctx.statusCode() : 503, t == null ? "request failed"
            : "request failed: " + t.getMessage() + " — check /health/ready and retry");
      }
    });
    server = vertx.createHttpServer().requestHandler(r);
    return server.listen(config.getInt(Keys.HTTP_PORT), config.get(Keys.HTTP_HOST))
        .onSuccess(s -> log.info("HTTP on http://{}:{} (health, metrics{})", config.get(Keys.HTTP_HOST), s.actualPort(),
            devices != null ? ", /api/v1" : ""))
        .recover(e -> Future.failedFuture(new IllegalStateException("cannot listen on " + config.get(Keys.HTTP_HOST) + ":"
            + config.get(Keys.HTTP_PORT) + " (" + e.getMessage() + "): set http.port to a free port")));
  }

  private void ready(RoutingContext ctx) {
    JsonObject checks = new JsonObject();
    boolean all = true;
    for (Map.Entry<String, BooleanSupplier> e : readiness.entrySet()) {
      boolean ok = e.getValue().getAsBoolean();
      all &= ok;
      checks.put(e.getKey(), ok ? "UP" : "DOWN");
    }
    json(ctx, all ? 200 : 503, new JsonObject().put("status", all ? "UP" : "DOWN").put("checks", checks));
  }

  private void importDevices(RoutingContext ctx) {
    String body = ctx.body().asString();
    if (body == null || body.isBlank()) {
      error(ctx, 400, "empty body: send a JSON array of devices or one device object per line");
      return;
    }
    JsonArray rejected = new JsonArray();
    java.util.List<dev.inspection.probe.Device> parsed;
    try {
      parsed = DeviceStore.parseImport(body, "default", config.getLong(Keys.PROBE_INTERVAL_MS), rejected);
    } catch (DecodeException e) {
      error(ctx, 400, "the body is not a JSON array: " + e.getMessage());
      return;
    }
    devices.get().importDevices(parsed)
        .onSuccess(v -> json(ctx, rejected.isEmpty() ? 200 : 207, new JsonObject().put("imported", parsed.size())
            .put("rejected", rejected).put("resource_version", v)))
        .onFailure(ctx::fail);
  }

  private void device(RoutingContext ctx) {
    String id = ctx.pathParam("id");
    devices.get().detail(id, 20).onSuccess(d -> {
      if (d == null) error(ctx, 404, "unknown device '" + id + "': import it with POST /api/v1/devices/import");
      else json(ctx, 200, d);
    }).onFailure(ctx::fail);
  }

  private void alerts(RoutingContext ctx) {
    String state = ctx.queryParams().get("state");
    if (state == null) state = "ACTIVE";
    if (state.equalsIgnoreCase("all")) state = null;
    else if (!state.equals("ACTIVE") && !state.equals("RESOLVED")) {
      error(ctx, 400, "state must be ACTIVE, RESOLVED or all");
      return;
    }
    int minSeverity;
    int limit;
    try {
      minSeverity = Integer.parseInt(ctx.queryParams().get("min_severity") == null ? "0" : ctx.queryParams().get("min_severity"));
      limit = Integer.parseInt(ctx.queryParams().get("limit") == null ? "500" : ctx.queryParams().get("limit"));
    } catch (NumberFormatException e) {
      error(ctx, 400, "min_severity (0..4) and limit (1..10000) must be whole numbers");
      return;
    }
    if (minSeverity < 0 || minSeverity > 4 || limit < 1 || limit > 10_000) {
      error(ctx, 400, "min_severity must be 0..4 and limit 1..10000");
      return;
    }
    String st = state;
    scheduler.get().state().alerts(st, ctx.queryParams().get("device"), minSeverity, ctx.queryParams().get("alert_key"), limit)
        .onSuccess(a -> json(ctx, 200, new JsonObject().put("alerts", a))).onFailure(ctx::fail);
  }

  private void rollups(RoutingContext ctx) {
    java.time.OffsetDateTime to;
    java.time.OffsetDateTime from;
    try {
      to = ctx.queryParams().get("to") == null ? java.time.OffsetDateTime.now(java.time.ZoneOffset.UTC)
          : java.time.OffsetDateTime.parse(ctx.queryParams().get("to"));
      from = ctx.queryParams().get("from") == null ? to.minusHours(1) : java.time.OffsetDateTime.parse(ctx.queryParams().get("from"));
    } catch (java.time.format.DateTimeParseException e) {
      error(ctx, 400, "from and to must be ISO-8601 instants with an offset, e.g. 2026-11-30T10:00:00Z");
      return;
    }
    if (!from.isBefore(to) || from.plusDays(7).isBefore(to)) {
      error(ctx, 400, "from must be before to, at most 7 days apart");
      return;
    }
    scheduler.get().state().rollups(ctx.pathParam("id"), from, to)
        .onSuccess(a -> json(ctx, 200, new JsonObject().put("device_id", ctx.pathParam("id")).put("from", from.toString()).put("to", to.toString())
            .put("minutes", a))).onFailure(ctx::fail);
  }

  private void inventory(RoutingContext ctx) {
    String group = ctx.queryParams().get("group");
    if (group == null || group.isBlank()) {
      error(ctx, 400, "query parameter 'group' is required (the probe group)");
      return;
    }
    int limit;
    try {
      limit = Integer.parseInt(ctx.queryParams().get("limit") == null ? "5000" : ctx.queryParams().get("limit"));
    } catch (NumberFormatException e) {
      error(ctx, 400, "limit must be a whole number");
      return;
    }
    if (limit < 1 || limit > 50_000) {
      error(ctx, 400, "limit must be between 1 and 50000");
      return;
    }
    String after = ctx.queryParams().get("after") == null ? "" : ctx.queryParams().get("after");
    devices.get().page(group, after, limit).onSuccess(p -> json(ctx, 200, p)).onFailure(ctx::fail);
  }

  static void json(RoutingContext ctx, int status, JsonObject body) {
    ctx.response().setStatusCode(status).putHeader("content-type", "application/json").end(body.encode());
  }

  static void error(RoutingContext ctx, int status, String message) {
    if (ctx.response().ended()) return;
    json(ctx, status, new JsonObject().put("error", message).put("status", status));
  }
}
