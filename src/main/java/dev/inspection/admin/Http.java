package dev.inspection.admin;

import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/** What every router answers with and reads from a request: JSON bodies, errors, redirects, checked parameters. */
final class Http {
  private Http() {}

  static void json(RoutingContext ctx, int status, JsonObject body) {
    ctx.response().setStatusCode(status).putHeader("content-type", "application/json").end(body.encode());
  }

  /** The error body of the whole API: {@code {"error": "<what to do>", "status": N}}. */
  static void error(RoutingContext ctx, int status, String message) {
    if (ctx.response().ended()) return;
    json(ctx, status, new JsonObject().put("error", message).put("status", status));
  }

  static void redirect(RoutingContext ctx, int status, String to) {
    ctx.response().setStatusCode(status).putHeader("Location", to).end();
  }

  /**
   * A whole-number query parameter as the API contract validated it (its range is in openapi.yaml), or the
   * default the contract declares for it when absent.
   */
  static int intParam(RoutingContext ctx, String name) {
    if (ApiContract.query(ctx, name) instanceof Number n) return n.intValue();
    throw new IllegalStateException("openapi.yaml declares no whole-number default for the query parameter '" + name + "' of "
        + ctx.request().method() + " " + ctx.normalizedPath());
  }

  /** A query parameter as the API contract validated it, its default there when absent, else null. */
  static String param(RoutingContext ctx, String name) {
    Object v = ApiContract.query(ctx, name);
    return v == null ? null : v.toString();
  }

  /** The body as a JSON object, empty when there is none; a DecodeException becomes a 400 in the failure handler. */
  static JsonObject bodyObject(RoutingContext ctx) {
    String b = ctx.body().asString();
    if (b == null || b.isBlank()) return new JsonObject();
    return new JsonObject(b);
  }

  static boolean signedIn(RoutingContext ctx) {
    return sessionPrincipal(ctx) != null;
  }

  /** The console login of this request's session, null when none (looking never creates a session: {@link ConsoleSessions}). */
  static Principal sessionPrincipal(RoutingContext ctx) {
    return ctx.get(ConsoleSessions.KEY);
  }

  /** Who asks, for the audit columns: the console user or the token's name. */
  static String who(RoutingContext ctx) {
    Principal p = ctx.get(Principal.KEY);
    return p == null ? "unknown" : p.name();
  }

  /** A route's path as the API documents it: {@code /devices/:id} is {@code /devices/{id}}. */
  static String template(String routePath) {
    return routePath.replaceAll(":([a-z_]+)", "{$1}");
  }

  /** A caller-supplied name made safe for a log line or a message: word characters only, at most 64. */
  static String printable(String s) {
    if (s == null) return "";
    String t = s.replaceAll("[^\\w.@-]", "?");
    return t.length() > 64 ? t.substring(0, 64) + "..." : t;
  }
}
