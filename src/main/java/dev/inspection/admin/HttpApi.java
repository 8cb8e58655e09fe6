package dev.inspection.admin;

import dev.inspection.common.ApiError;
import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import dev.inspection.metrics.Metrics;
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

  private final Credentials credentials;
  private Router router;

  /** "METHOD /api/v1/path/{param}" of every API route, for the test that holds the OpenAPI text to them. */
  public java.util.Set<String> apiRoutes() {
    java.util.Set<String> out = new java.util.TreeSet<>();
    for (io.vertx.ext.web.Route route : router.getRoutes()) {
      String path = route.getPath();
      if (path == null || !path.startsWith("/api/v1/") || path.endsWith("*") || route.methods() == null) continue;
      for (io.vertx.core.http.HttpMethod m : route.methods()) out.add(m.name() + " " + path.replaceAll(":([a-z]+)", "{$1}"));
    }
    return out;
  }

  public HttpApi(Config config, Metrics metrics, Map<String, BooleanSupplier> readiness, Supplier<SchedulerVerticle> scheduler,
      Credentials credentials) {
    this.credentials = credentials;
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
    router = r;
    r.get("/health/live").handler(ctx -> json(ctx, 200, new JsonObject().put("status", "UP")));
    r.get("/health/ready").handler(this::ready);
    r.get("/metrics").handler(ctx -> ctx.response().putHeader("content-type", "text/plain; version=0.0.4; charset=utf-8").end(metrics.scrape()));
    if (devices != null) {
      io.vertx.ext.web.handler.SessionHandler sessions = io.vertx.ext.web.handler.SessionHandler
          .create(io.vertx.ext.web.sstore.LocalSessionStore.create(vertx))
          .setSessionCookieName("inspection_session").setCookieHttpOnlyFlag(true)
          .setCookieSameSite(io.vertx.core.http.CookieSameSite.STRICT).setSessionTimeout(8L * 3600 * 1000);
      for (String path : java.util.List.of("/login", "/logout", "/console/*", "/api/v1/*")) r.route(path).handler(sessions);
      r.get("/").handler(ctx -> redirect(ctx, 302, "/console/"));
      r.get("/login").handler(ctx -> resource(ctx, "webroot/login.html", "text/html; charset=utf-8", LOGIN_FALLBACK));
      r.post("/login").handler(BodyHandler.create().setBodyLimit(8192)).handler(this::login);
      r.post("/logout").handler(ctx -> {
        if (ctx.session() != null) ctx.session().destroy();
        redirect(ctx, 303, "/login");
      });
      r.route("/console/*").handler(ctx -> {
        if (signedIn(ctx)) ctx.next();
        else redirect(ctx, 302, "/login");
      });
      r.route("/console/*").handler(io.vertx.ext.web.handler.StaticHandler.create("webroot/console").setCachingEnabled(false));
      r.route("/webjars/*").handler(io.vertx.ext.web.handler.StaticHandler.create("META-INF/resources/webjars"));
      r.get("/api/v1/openapi.yaml").handler(ctx -> resource(ctx, "openapi.yaml", "application/yaml", null));
      r.route("/api/v1/*").handler(this::apiAuth);
      r.route("/api/v1/*").handler(BodyHandler.create().setBodyLimit(256L * 1024 * 1024));
      r.post("/api/v1/devices/import").handler(this::importDevices);
      r.get("/api/v1/devices/:id").handler(this::device);
      r.get("/api/v1/probe/inventory").handler(this::inventory);
      r.get("/api/v1/slots").handler(this::slots);
      r.get("/api/v1/overview").handler(this::overview);
      r.get("/api/v1/versions").handler(ctx -> scheduler.get().view().versions().onSuccess(v -> json(ctx, 200, v)).onFailure(ctx::fail));
      r.get("/api/v1/slots/:id/history").handler(this::slotHistory);
      r.get("/api/v1/devices").handler(this::searchDevices);
      r.patch("/api/v1/devices/:id").handler(this::updateDevice);
      r.post("/api/v1/workers/:id/quarantine").handler(ctx -> scheduler.get().quarantine(ctx.pathParam("id"))
          .onSuccess(w -> json(ctx, 202, w)).onFailure(ctx::fail));
      r.post("/api/v1/alerts/:device/:key/ack").handler(this::ack);
      r.get("/api/v1/dead-letters").handler(this::deadLetters);
      r.post("/api/v1/dead-letters/replay").handler(this::replay);
      r.post("/api/v1/dead-letters/discard").handler(this::discard);
      r.get("/api/v1/jobs/:id").handler(this::job);
      r.get("/api/v1/probes").handler(ctx -> scheduler.get().probes().onSuccess(a -> json(ctx, 200, new JsonObject().put("probes", a)))
          .onFailure(e -> error(ctx, 503, "cannot read the probes' reports from Redis (" + e.getMessage() + "): check redis.url and Redis")));
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
    scheduler.get().requireLeader().onFailure(ctx::fail).onSuccess(v -> importOnLeader(ctx));
  }

  private void importOnLeader(RoutingContext ctx) {
    String body = ctx.body().asString();
    if (body == null || body.isBlank()) {
      error(ctx, 400, "empty body: send a JSON array of devices or one device object per line");
      return;
    }
    JsonArray rejected = new JsonArray();
    java.util.List<dev.inspection.inventory.Device> parsed;
    try {
      parsed = DeviceStore.parseImport(body, "default", config.getLong(Keys.PROBE_INTERVAL_MS), rejected);
    } catch (DecodeException e) {
      error(ctx, 400, "the body is not a JSON array: " + e.getMessage());
      return;
    }
    if ("true".equals(ctx.queryParams().get("async"))) {
      // a large import: answer at once with a job whose progress GET /api/v1/jobs/{id} reports
      dev.inspection.scheduler.Jobs.Job job = scheduler.get().jobs().start("device import", parsed.size());
      importChunks(parsed, 0, job, rejected);
      json(ctx, 202, new JsonObject().put("job_id", job.id()).put("rejected", rejected).put("job", job.toJson()));
      return;
    }
    devices.get().importDevices(parsed)
        .onSuccess(v -> json(ctx, rejected.isEmpty() ? 200 : 207, new JsonObject().put("imported", parsed.size())
            .put("rejected", rejected).put("resource_version", v)))
        .onFailure(ctx::fail);
  }

  private void importChunks(java.util.List<dev.inspection.inventory.Device> all, int from, dev.inspection.scheduler.Jobs.Job job, JsonArray rejected) {
    if (from >= all.size()) {
      job.done("imported " + all.size() + " device(s); rejected " + rejected.size());
      return;
    }
    java.util.List<dev.inspection.inventory.Device> chunk = all.subList(from, Math.min(all.size(), from + 5000));
    devices.get().importDevices(chunk).onSuccess(v -> {
      job.advance(chunk.size());
      importChunks(all, from + chunk.size(), job, rejected);
    }).onFailure(e -> job.fail("stopped after " + from + " of " + all.size() + ": " + e.getMessage() + " (import again: it is an upsert)"));
  }

  private void device(RoutingContext ctx) {
    String id = ctx.pathParam("id");
    Integer history = intParam(ctx, "history", 20, 1, 1000);
    if (history == null) return;
    devices.get().detail(id, history).onSuccess(d -> {
      if (d == null) error(ctx, 404, "unknown device '" + id + "': import it with POST /api/v1/devices/import");
      else json(ctx, 200, d);
    }).onFailure(ctx::fail);
  }

  private String who(RoutingContext ctx) {
    Object u = ctx.session() == null ? null : ctx.session().get("user");
    return u == null ? "api-token" : u.toString();
  }

  private void overview(RoutingContext ctx) {
    SchedulerVerticle s = scheduler.get();
    s.view().overview().onSuccess(o -> json(ctx, 200, o.put("backlog_total", s.queues().total()).put("this_node_leads", s.leading())))
        .onFailure(ctx::fail);
  }

  private void slots(RoutingContext ctx) {
    SchedulerVerticle s = scheduler.get();
    devices.get().slots().compose(a -> s.view().slotMetrics().map(m -> {
      for (int i = 0; i < a.size(); i++) {
        JsonObject slot = a.getJsonObject(i);
        int id = slot.getInteger("slot_id");
        JsonObject owner = m.get(id);
        slot.put("backlog", s.queues().depth(id)).put("mailbox", owner == null ? null : owner.getLong("mailbox"))
            .put("lag_ms", owner == null ? null : owner.getLong("lag_ms")).put("rate", owner == null ? null : owner.getDouble("rate"));
      }
      return a;
    })).onSuccess(a -> json(ctx, 200, new JsonObject().put("slots", a))).onFailure(ctx::fail);
  }

  private void slotHistory(RoutingContext ctx) {
    int slot;
    try {
      slot = Integer.parseInt(ctx.pathParam("id"));
    } catch (NumberFormatException e) {
      error(ctx, 400, "slot id must be a whole number (0 .. slots.total - 1)");
      return;
    }
    if (slot < 0 || slot >= config.getInt(Keys.SLOTS_TOTAL)) {
      error(ctx, 404, "no slot " + slot + ": slots are 0 .. " + (config.getInt(Keys.SLOTS_TOTAL) - 1));
      return;
    }
    scheduler.get().view().slotHistory(slot, 200).onSuccess(a -> json(ctx, 200, new JsonObject().put("slot_id", slot).put("history", a)))
        .onFailure(ctx::fail);
  }

  /**
   * A whole-number query parameter within [min, max], its default when absent; null after answering 400
   * with a message naming the parameter and its range.
   */
  private static Integer intParam(RoutingContext ctx, String name, int dflt, int min, int max) {
    String v = ctx.queryParams().get(name);
    try {
      int n = v == null ? dflt : Integer.parseInt(v.trim());
      if (n >= min && n <= max) return n;
    } catch (NumberFormatException ignored) {
      // answered below
    }
    error(ctx, 400, name + " must be a whole number from " + min + " to " + max + " (got '" + v + "')");
    return null;
  }

  private void searchDevices(RoutingContext ctx) {
    String q = ctx.queryParams().get("q") == null ? "" : ctx.queryParams().get("q");
    Integer limit = intParam(ctx, "limit", 50, 1, 1000);
    if (limit == null) return;
    if (q.length() > 64) {
      error(ctx, 400, "q must be at most 64 characters (a device id prefix)");
      return;
    }
    devices.get().search(q, limit).onSuccess(a -> json(ctx, 200, new JsonObject().put("devices", a))).onFailure(ctx::fail);
  }

  private JsonObject bodyObject(RoutingContext ctx) {
    String b = ctx.body().asString();
    if (b == null || b.isBlank()) return new JsonObject();
    return new JsonObject(b); // a DecodeException becomes a 400 in the failure handler
  }

  private void updateDevice(RoutingContext ctx) {
    String id = ctx.pathParam("id");
    JsonObject patch = bodyObject(ctx);
    scheduler.get().requireLeader().compose(v -> devices.get().update(id, patch)).onSuccess(version -> {
      if (version == null) error(ctx, 404, "unknown device '" + id + "' in the inventory: add it with POST /api/v1/devices/import");
      else json(ctx, 200, new JsonObject().put("device_id", id).put("resource_version", version));
    }).onFailure(e -> {
      if (e instanceof IllegalArgumentException) error(ctx, 400, e.getMessage());
      else ctx.fail(e);
    });
  }

  private void ack(RoutingContext ctx) {
    JsonObject body = bodyObject(ctx);
    String device = ctx.pathParam("device");
    String key = ctx.pathParam("key");
    scheduler.get().requireLeader().compose(v -> scheduler.get().state().ack(device, key, who(ctx), body.getString("note"))).onSuccess(a -> {
      if (a == null) error(ctx, 404, "device '" + device + "' has no alert '" + key + "': GET /api/v1/alerts?state=all lists them");
      else json(ctx, 200, a);
    }).onFailure(ctx::fail);
  }

  private void deadLetters(RoutingContext ctx) {
    String state = ctx.queryParams().get("state") == null ? "PENDING" : ctx.queryParams().get("state");
    if (state.equalsIgnoreCase("all")) state = null;
    else if (!java.util.Set.of("PENDING", "REPLAYED", "DISCARDED").contains(state)) {
      error(ctx, 400, "state must be PENDING, REPLAYED, DISCARDED or all");
      return;
    }
    Integer limit = intParam(ctx, "limit", 200, 1, 5000);
    if (limit == null) return;
    scheduler.get().deadLetters().list(state, ctx.queryParams().get("reason"), limit).onSuccess(j -> json(ctx, 200, j)).onFailure(ctx::fail);
  }

  private Long[] ids(JsonObject body) {
    JsonArray a = body.getJsonArray("ids");
    if (a == null) return null;
    Long[] out = new Long[a.size()];
    for (int i = 0; i < a.size(); i++) {
      if (!(a.getValue(i) instanceof Number n)) throw new IllegalArgumentException("ids must be a JSON array of dead-letter ids (numbers)");
      out[i] = n.longValue();
    }
    return out;
  }

  /** The body's dead-letter ids (null = none given); answers 400 and throws when they are not numbers. */
  private Long[] idsOr400(RoutingContext ctx) {
    try {
      return ids(bodyObject(ctx));
    } catch (IllegalArgumentException e) {
      error(ctx, 400, e.getMessage());
      throw e;
    }
  }

  private void replay(RoutingContext ctx) {
    Long[] ids;
    try {
      ids = idsOr400(ctx);
    } catch (IllegalArgumentException answered) {
      return;
    }
    scheduler.get().requireLeader().compose(v -> scheduler.get().deadLetters().replay(ids, who(ctx)))
        .onSuccess(job -> json(ctx, 202, new JsonObject().put("job_id", job.id()).put("job", job.toJson()))).onFailure(ctx::fail);
  }

  private void discard(RoutingContext ctx) {
    Long[] ids;
    try {
      ids = idsOr400(ctx);
    } catch (IllegalArgumentException answered) {
      return;
    }
    if (ids == null || ids.length == 0) {
      error(ctx, 400, "send {\"ids\": [...]}: discarding needs explicit ids");
      return;
    }
    scheduler.get().requireLeader().compose(v -> scheduler.get().deadLetters().discard(ids, who(ctx)))
        .onSuccess(n -> json(ctx, 200, new JsonObject().put("discarded", n))).onFailure(ctx::fail);
  }

  private void job(RoutingContext ctx) {
    dev.inspection.scheduler.Jobs.Job j;
    try {
      j = scheduler.get().jobs().get(Long.parseLong(ctx.pathParam("id")));
    } catch (NumberFormatException e) {
      error(ctx, 400, "job id must be a number");
      return;
    }
    if (j == null) error(ctx, 404, "no job " + ctx.pathParam("id") + " on this node (jobs live on the node that started them; the last 200 are kept)");
    else json(ctx, 200, j.toJson());
  }

  private void alerts(RoutingContext ctx) {
    String state = ctx.queryParams().get("state");
    if (state == null) state = "ACTIVE";
    if (state.equalsIgnoreCase("all")) state = null;
    else if (!state.equals("ACTIVE") && !state.equals("RESOLVED")) {
      error(ctx, 400, "state must be ACTIVE, RESOLVED or all");
      return;
    }
    Integer minSeverity = intParam(ctx, "min_severity", 0, 0, 4);
    if (minSeverity == null) return;
    Integer limit = intParam(ctx, "limit", 500, 1, 10_000);
    if (limit == null) return;
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
    Integer limit = intParam(ctx, "limit", 5000, 1, 50_000);
    if (limit == null) return;
    String after = ctx.queryParams().get("after") == null ? "" : ctx.queryParams().get("after");
    devices.get().page(group, after, limit).onSuccess(p -> json(ctx, 200, p)).onFailure(ctx::fail);
  }

  private static final String LOGIN_FALLBACK = "<!doctype html><title>inspection login</title><form method=post action=/login>"
      + "<input name=username placeholder=user><input name=password type=password placeholder=password><button>Log in</button></form>";

  private boolean signedIn(RoutingContext ctx) {
    return ctx.session() != null && ctx.session().get("user") != null;
  }

  /** Every API route but the probes' inventory/pacing and the OpenAPI text needs the token or a console session. */
  private void apiAuth(RoutingContext ctx) {
    String path = ctx.normalizedPath();
    if (path.startsWith("/api/v1/probe/") || path.equals("/api/v1/openapi.yaml")) {
      ctx.next();
      return;
    }
    String h = ctx.request().getHeader("Authorization");
    if (h != null && h.startsWith("Bearer ") && credentials.tokenMatches(h.substring(7).trim())) {
      ctx.next();
      return;
    }
    if (signedIn(ctx)) {
      ctx.next();
      return;
    }
    error(ctx, 401, h == null ? "credentials required: send the header Authorization: Bearer <api.token>, or log in at /login"
        : "the token is not valid: use the api.token this node was started with");
  }

  private void login(RoutingContext ctx) {
    String user = ctx.request().getFormAttribute("username");
    String password = ctx.request().getFormAttribute("password");
    if (credentials.loginMatches(user, password)) {
      ctx.session().regenerateId();
      ctx.session().put("user", user);
      log.info("console login of '{}' from {}", user, ctx.request().remoteAddress());
      redirect(ctx, 303, "/console/");
    } else {
      log.warn("console login refused for user '{}' from {}", user == null ? "" : user.replaceAll("[^\\w.@-]", "?"), ctx.request().remoteAddress());
      redirect(ctx, 303, "/login?failed=1");
    }
  }

  private static void redirect(RoutingContext ctx, int status, String to) {
    ctx.response().setStatusCode(status).putHeader("Location", to).end();
  }

  private void resource(RoutingContext ctx, String path, String type, String fallback) {
    vertx.executeBlocking(() -> {
      try (java.io.InputStream in = HttpApi.class.getClassLoader().getResourceAsStream(path)) {
        return in == null ? null : in.readAllBytes();
      }
    }, false).onSuccess(bytes -> {
      if (bytes == null && fallback == null) {
        error(ctx, 404, path + " is missing from the jar");
      } else {
        ctx.response().putHeader("content-type", type).end(bytes == null ? io.vertx.core.buffer.Buffer.buffer(fallback)
            : io.vertx.core.buffer.Buffer.buffer(bytes));
      }
    }).onFailure(ctx::fail);
  }

  static void json(RoutingContext ctx, int status, JsonObject body) {
    ctx.response().setStatusCode(status).putHeader("content-type", "application/json").end(body.encode());
  }

  static void error(RoutingContext ctx, int status, String message) {
    if (ctx.response().ended()) return;
    json(ctx, status, new JsonObject().put("error", message).put("status", status));
  }
}
