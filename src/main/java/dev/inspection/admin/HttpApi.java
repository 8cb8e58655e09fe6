package dev.inspection.admin;

import static dev.inspection.admin.Http.error;

import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import dev.inspection.metrics.Metrics;
import dev.inspection.scheduler.AuditLog;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP server every role serves: {@code /health/live}, {@code /health/ready}, {@code /metrics}, and
 * on the scheduler role the console and the {@code /api/v1} routes, one {@link Routes} per resource; on the
 * probe role its push endpoint ({@link #withRoleRoutes}).
 * Errors are JSON with a message that says what to do ({@link FailureHandler}). Every answer carries the
 * security headers and a request id ({@link Frontline}); a body is read only on an API mutation, after
 * its credentials were checked ({@link ApiAuth}), never to disk, and within its route's limit (issue 10); then the
 * request is validated against the API contract, {@code openapi.yaml} ({@link ApiContract}, issue 15).
 */
public final class HttpApi extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(HttpApi.class);

  private final Config config;
  private final HealthRoutes health;
  private final Credentials credentials;
  private final List<Routes> resources;
  private final AuditLog auditLog;
  private final List<Consumer<Router>> roleRoutes = new ArrayList<>();
  private String contractPath = ApiContract.RESOURCE;
  private ConsoleSessions sessions;
  private HttpServer server;
  private Router router;

  /** A role without the API: health and metrics only. */
  public HttpApi(Config config, Metrics metrics, Map<String, BooleanSupplier> readiness) {
    this(config, metrics, readiness, null, List.of());
  }

  /**
   * Routes of a role outside {@code /api/v1} with their own credentials (the probe's push endpoint, issue 13), mounted
   * when the server starts.
   */
  public HttpApi withRoleRoutes(List<Consumer<Router>> mounts) {
    roleRoutes.addAll(mounts);
    return this;
  }

  /** The API contract to load instead of the jar's {@code openapi.yaml} (a test's). */
  HttpApi withContract(String path) {
    contractPath = path;
    return this;
  }

  /** The scheduler role: also the console (login with {@code credentials}) and the API's {@code resources}. */
  public HttpApi(Config config, Metrics metrics, Map<String, BooleanSupplier> readiness, Credentials credentials, List<Routes> resources) {
    this(config, metrics, readiness, credentials, resources, null);
  }

  /** ... with the audit log every mutation and login is written to (null: none). */
  public HttpApi(Config config, Metrics metrics, Map<String, BooleanSupplier> readiness, Credentials credentials, List<Routes> resources,
      AuditLog auditLog) {
    this.config = config;
    this.health = new HealthRoutes(metrics, readiness);
    this.credentials = credentials;
    this.resources = List.copyOf(resources);
    this.auditLog = auditLog;
  }

  /** Live console sessions (0 on a role without the console). */
  public int consoleSessions() {
    return sessions == null ? 0 : sessions.size();
  }

  public int port() {
    return server == null ? -1 : server.actualPort();
  }

  /** "METHOD /api/v1/path/{param}" of every API route, for the test that holds the OpenAPI text to them. */
  public Set<String> apiRoutes() {
    Set<String> out = new TreeSet<>();
    for (Route route : router.getRoutes()) {
      String path = route.getPath();
      if (path == null || !path.startsWith("/api/v1/") || path.endsWith("*") || route.methods() == null) continue;
      for (HttpMethod m : route.methods()) out.add(m.name() + " " + Http.template(path));
    }
    return out;
  }

  /** Reads the body of a mutation only (after ApiAuth), into memory, within its limit: a larger one fails with 413. */
  private static Handler<RoutingContext> bodies(long limit, long importLimit) {
    BodyHandler small = BodyHandler.create(false).setBodyLimit(limit);
    BodyHandler big = BodyHandler.create(false).setBodyLimit(importLimit);
    return ctx -> {
      if (!ApiAuth.isMutation(ctx.request().method())) ctx.next();
      else if (ctx.normalizedPath().equals("/api/v1/devices/import")) big.handle(ctx);
      else small.handle(ctx);
    };
  }

  @Override
  public Future<?> start() {
    // the API's contract first: a broken one stops the start (the health routes of other roles need none)
    return (credentials == null ? Future.succeededFuture((ApiContract) null) : ApiContract.load(vertx, contractPath)).compose(this::serve);
  }

  private Future<?> serve(ApiContract contract) {
    Router r = Router.router(vertx);
    router = r;
    r.route().handler(new Frontline());
    r.route().handler(new AccessLog()); // after Frontline: the line carries its request id
    health.mount(r);
    boolean api = credentials != null;
    if (api) {
      // the sessions and the login come before the API's auth, which accepts a console session
      Audit audit = new Audit(auditLog);
      sessions = new ConsoleSessions(config.getInt(Keys.CONSOLE_SESSIONS_MAX), config.getLong(Keys.CONSOLE_SESSION_IDLE_MS), System::currentTimeMillis);
      vertx.setPeriodic(60_000, t -> sessions.sweep());
      LoginThrottle throttle = new LoginThrottle(config.getInt(Keys.CONSOLE_LOGIN_FREE_FAILURES), config.getLong(Keys.CONSOLE_LOGIN_MAX_DELAY_MS), 10_000);
      new ConsoleRoutes(vertx, credentials, sessions, throttle, audit).mount(r);
      r.route("/api/v1/*").handler(new ApiAuth(credentials, audit));
      r.route("/api/v1/*").handler(bodies(config.getLong(Keys.HTTP_BODY_MAX_BYTES), config.getLong(Keys.HTTP_IMPORT_MAX_BYTES)));
      r.route("/api/v1/*").handler(contract); // after the credentials (a stranger learns nothing of the contract) and the body
      audit.mount(r);
      for (Routes resource : resources) resource.mount(r);
    }
    for (Consumer<Router> mount : roleRoutes) mount.accept(r);
    r.route().last().handler(ctx -> error(ctx, 404, "no route " + ctx.request().method() + " " + ctx.request().path()
        + ": see the README for the API"));
    r.route().failureHandler(new FailureHandler());
    // https when http.tls.cert/key are set (files read off the event loop; a bad one fails start-up naming the key)
    return vertx.executeBlocking(() -> HttpTls.serverOptions(config, vertx)).compose(options -> {
      server = vertx.createHttpServer(options).requestHandler(r);
      return server.listen(config.getInt(Keys.HTTP_PORT), config.get(Keys.HTTP_HOST))
          .onSuccess(s -> log.info("HTTP on {}://{}:{} (health, metrics{})", options.isSsl() ? "https" : "http", config.get(Keys.HTTP_HOST),
              s.actualPort(), api ? ", /api/v1" : ""))
          .recover(e -> Future.failedFuture(new IllegalStateException("cannot listen on " + config.get(Keys.HTTP_HOST) + ":"
              + config.get(Keys.HTTP_PORT) + " (" + e.getMessage() + "): set http.port to a free port")));
    });
  }
}
