package dev.inspection.admin;

import static dev.inspection.admin.Http.error;

import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import dev.inspection.metrics.Metrics;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP server every role serves: {@code /health/live}, {@code /health/ready}, {@code /metrics}, and
 * on the scheduler role the console and the {@code /api/v1} routes, one {@link Routes} per resource.
 * Errors are JSON with a message that says what to do ({@link FailureHandler}).
 */
public final class HttpApi extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(HttpApi.class);

  private final Config config;
  private final HealthRoutes health;
  private final Credentials credentials;
  private final List<Routes> resources;
  private HttpServer server;
  private Router router;

  /** A role without the API: health and metrics only. */
  public HttpApi(Config config, Metrics metrics, Map<String, BooleanSupplier> readiness) {
    this(config, metrics, readiness, null, List.of());
  }

  /** The scheduler role: also the console (login with {@code credentials}) and the API's {@code resources}. */
  public HttpApi(Config config, Metrics metrics, Map<String, BooleanSupplier> readiness, Credentials credentials, List<Routes> resources) {
    this.config = config;
    this.health = new HealthRoutes(metrics, readiness);
    this.credentials = credentials;
    this.resources = List.copyOf(resources);
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
      for (HttpMethod m : route.methods()) out.add(m.name() + " " + path.replaceAll(":([a-z]+)", "{$1}"));
    }
    return out;
  }

  @Override
  public Future<?> start() {
    Router r = Router.router(vertx);
    router = r;
    health.mount(r);
    boolean api = credentials != null;
    if (api) {
      // the session handler and the login come before the API's auth, which accepts a console session
      new ConsoleRoutes(vertx, credentials).secureCookie(HttpTls.enabled(config)).mount(r);
      r.route("/api/v1/*").handler(new ApiAuth(credentials));
      r.route("/api/v1/*").handler(BodyHandler.create().setBodyLimit(256L * 1024 * 1024));
      for (Routes resource : resources) resource.mount(r);
    }
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
