package dev.inspection.admin;

import dev.inspection.common.ApiError;
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
   * A whole-number query parameter within [min, max], its default when absent; otherwise an
   * {@link ApiError} 400 naming the parameter and its range (thrown: the failure handler answers it).
   */
  static int intParam(RoutingContext ctx, String name, int dflt, int min, int max) {
    String v = ctx.queryParams().get(name);
    try {
      int n = v == null ? dflt : Integer.parseInt(v.trim());
      if (n >= min && n <= max) return n;
    } catch (NumberFormatException ignored) {
      // answered below
    }
    throw new ApiError(400, name + " must be a whole number from " + min + " to " + max + " (got '" + v + "')");
  }

  /** A query parameter, or {@code dflt} when absent. */
  static String param(RoutingContext ctx, String name, String dflt) {
    String v = ctx.queryParams().get(name);
    return v == null ? dflt : v;
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
