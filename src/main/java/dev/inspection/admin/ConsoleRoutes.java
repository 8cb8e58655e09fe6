package dev.inspection.admin;

import static dev.inspection.admin.Http.error;
import static dev.inspection.admin.Http.redirect;
import static dev.inspection.admin.Http.signedIn;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.StaticHandler;
import java.io.InputStream;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The console: its sessions ({@link ConsoleSessions}: looked up on {@code /login}, {@code /logout},
 * {@code /console/*} and {@code /api/v1/*}, created only by a login), login and logout, the console's
 * static files behind the login, the webjars, and the OpenAPI text. Mounted before the API's auth.
 * A login is a same-origin form post of at most 8 KiB, throttled per user and per address
 * ({@link LoginThrottle}: 429 with Retry-After), checked against the PBKDF2 hash off the event loop, and
 * audited.
 */
final class ConsoleRoutes implements Routes {
  private static final Logger log = LoggerFactory.getLogger(ConsoleRoutes.class);

  private static final String LOGIN_FALLBACK = "<!doctype html><title>inspection login</title><form method=post action=/login>"
      + "<input name=username placeholder=user><input name=password type=password placeholder=password><button>Log in</button></form>";

  private final Vertx vertx;
  private final Credentials credentials;
  private final ConsoleSessions sessions;
  private final LoginThrottle throttle;
  private final Audit audit;

  ConsoleRoutes(Vertx vertx, Credentials credentials, ConsoleSessions sessions, LoginThrottle throttle, Audit audit) {
    this.vertx = vertx;
    this.credentials = credentials;
    this.sessions = sessions;
    this.throttle = throttle;
    this.audit = audit;
  }

  @Override
  public void mount(Router r) {
    for (String path : List.of("/login", "/logout", "/console/*", "/api/v1/*")) r.route(path).handler(sessions::attach);
    r.get("/").handler(ctx -> redirect(ctx, 302, "/console/"));
    r.get("/login").handler(ctx -> resource(ctx, "webroot/login.html", "text/html; charset=utf-8", LOGIN_FALLBACK));
    r.get("/login.js").handler(ctx -> resource(ctx, "webroot/login.js", "text/javascript; charset=utf-8", ""));
    r.post("/login").handler(ConsoleRoutes::formFromThisHost);
    r.post("/login").handler(BodyHandler.create(false).setBodyLimit(8192)).handler(this::login);
    r.post("/logout").handler(ctx -> {
      if (!Frontline.sameOrigin(ctx)) {
        error(ctx, 403, "cross-origin request refused: log out from the console's own page");
        return;
      }
      sessions.end(ctx);
      redirect(ctx, 303, "/login");
    });
    r.route("/console/*").handler(ctx -> {
      if (signedIn(ctx)) ctx.next();
      else redirect(ctx, 302, "/login");
    });
    r.route("/console/*").handler(StaticHandler.create("webroot/console").setCachingEnabled(false));
    r.route("/webjars/*").handler(StaticHandler.create("META-INF/resources/webjars"));
    r.get("/api/v1/openapi.yaml").handler(ctx -> resource(ctx, "openapi.yaml", "application/yaml", null));
  }

  /** Before the body is read: a login is an urlencoded form from one of this host's pages. */
  private static void formFromThisHost(RoutingContext ctx) {
    if (!Frontline.sameOrigin(ctx)) {
      error(ctx, 403, "cross-origin login refused: log in from this host's /login page");
    } else if (!Frontline.mediaType(ctx).equals("application/x-www-form-urlencoded")) {
      error(ctx, 415, "a login is a form: send Content-Type: application/x-www-form-urlencoded with username and password");
    } else {
      ctx.next();
    }
  }

  private void login(RoutingContext ctx) {
    String user = ctx.request().getFormAttribute("username");
    String password = ctx.request().getFormAttribute("password");
    String address = Audit.remote(ctx);
    long wait = throttle.waitMs(user, address, System.currentTimeMillis());
    if (wait > 0) {
      ctx.response().putHeader("Retry-After", Long.toString((wait + 999) / 1000));
      error(ctx, 429, "too many failed logins: wait " + ((wait + 999) / 1000) + " s before the next attempt");
      return;
    }
    // counted as a failure until the hash says otherwise, so parallel guesses are throttled too
    throttle.failed(user, address, System.currentTimeMillis());
    vertx.executeBlocking(() -> credentials.login(user, password), false).onSuccess(who -> {
      if (who == null) {
        log.warn("console login refused for user '{}' from {}", Http.printable(user), address);
        audit.login(ctx, user, null, 401);
        redirect(ctx, 303, "/login?failed=1");
        return;
      }
      throttle.succeeded(user, address);
      if (!sessions.create(ctx, who)) {
        log.warn("console login of '{}' from {} refused: console.sessions.max sessions are live", who.name(), address);
        audit.login(ctx, user, who, 503);
        error(ctx, 503, "too many console sessions are open: log out elsewhere or wait until idle ones expire (console.session.idle.ms)");
        return;
      }
      log.info("console login of '{}' ({}) from {}", who.name(), who.role(), address);
      audit.login(ctx, user, who, 200);
      redirect(ctx, 303, "/console/");
    }).onFailure(ctx::fail);
  }

  /** A file from the jar, read off the event loop; {@code fallback} (or a 404) when it is missing. */
  private void resource(RoutingContext ctx, String path, String type, String fallback) {
    vertx.executeBlocking(() -> {
      try (InputStream in = ConsoleRoutes.class.getClassLoader().getResourceAsStream(path)) {
        return in == null ? null : in.readAllBytes();
      }
    }, false).onSuccess(bytes -> {
      if (bytes == null && fallback == null) {
        error(ctx, 404, path + " is missing from the jar");
      } else {
        ctx.response().putHeader("content-type", type).end(bytes == null ? Buffer.buffer(fallback) : Buffer.buffer(bytes));
      }
    }).onFailure(ctx::fail);
  }
}
