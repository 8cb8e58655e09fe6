package dev.inspection.admin;

import static dev.inspection.admin.Http.error;
import static dev.inspection.admin.Http.redirect;
import static dev.inspection.admin.Http.signedIn;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.CookieSameSite;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.SessionHandler;
import io.vertx.ext.web.handler.StaticHandler;
import io.vertx.ext.web.sstore.LocalSessionStore;
import java.io.InputStream;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The console: the session handler (also in front of {@code /api/v1}, whose auth accepts a console
 * session), login and logout, the console's static files behind the login, the webjars, and the OpenAPI
 * text. Mounted before the API's auth and body handlers.
 */
final class ConsoleRoutes implements Routes {
  private static final Logger log = LoggerFactory.getLogger(ConsoleRoutes.class);

  private static final String LOGIN_FALLBACK = "<!doctype html><title>inspection login</title><form method=post action=/login>"
      + "<input name=username placeholder=user><input name=password type=password placeholder=password><button>Log in</button></form>";

  private final Vertx vertx;
  private final Credentials credentials;

  ConsoleRoutes(Vertx vertx, Credentials credentials) {
    this.vertx = vertx;
    this.credentials = credentials;
  }

  /** HTTPS (HttpTls): the session cookie gets the Secure flag. */
  private boolean secureCookie;

  ConsoleRoutes secureCookie(boolean on) {
    this.secureCookie = on;
    return this;
  }

  @Override
  public void mount(Router r) {
    SessionHandler sessions = SessionHandler.create(LocalSessionStore.create(vertx))
        .setSessionCookieName("inspection_session").setCookieHttpOnlyFlag(true)
        .setCookieSameSite(CookieSameSite.STRICT).setSessionTimeout(8L * 3600 * 1000).setCookieSecureFlag(secureCookie);
    for (String path : List.of("/login", "/logout", "/console/*", "/api/v1/*")) r.route(path).handler(sessions);
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
    r.route("/console/*").handler(StaticHandler.create("webroot/console").setCachingEnabled(false));
    r.route("/webjars/*").handler(StaticHandler.create("META-INF/resources/webjars"));
    r.get("/api/v1/openapi.yaml").handler(ctx -> resource(ctx, "openapi.yaml", "application/yaml", null));
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
