package dev.inspection.admin;

import static dev.inspection.admin.Http.error;

import io.vertx.core.Handler;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.RoutingContext;

/**
 * Who may do what on {@code /api/v1} (issue 10). Every route but the OpenAPI text needs a credential: a
 * bearer token (operator, reader or a probe group's) or a console session, read without creating one.
 * {@code /api/v1/probe/*} serves a probe token of the asked group (or an API credential); a probe token
 * serves nothing else. A mutation needs the operator role (the reader gets 403), is audited, and when it
 * rides on the session cookie must come from this host's pages (Origin) with a JSON body, else 403/415.
 * A multipart body is never read (415). Runs before any body is read.
 */
final class ApiAuth implements Handler<RoutingContext> {
  private final Credentials credentials;
  private final Audit audit;

  ApiAuth(Credentials credentials, Audit audit) {
    this.credentials = credentials;
    this.audit = audit;
  }

  static boolean isMutation(HttpMethod m) {
    return !(m == HttpMethod.GET || m == HttpMethod.HEAD || m == HttpMethod.OPTIONS);
  }

  @Override
  public void handle(RoutingContext ctx) {
    String path = ctx.normalizedPath();
    if (path.equals("/api/v1/openapi.yaml")) {
      ctx.next();
      return;
    }
    String h = ctx.request().getHeader("Authorization");
    Principal who;
    boolean cookie = h == null;
    if (cookie) {
      who = Http.sessionPrincipal(ctx);
    } else {
      who = h.startsWith("Bearer ") ? credentials.bearer(h.substring(7).trim()) : null;
      if (who == null) {
        error(ctx, 401, "the token is not valid: send Authorization: Bearer <token> with the api.token (or api.read.token) this node was started with");
        return;
      }
    }
    boolean probeRoute = path.startsWith("/api/v1/probe/");
    if (who == null) {
      error(ctx, 401, probeRoute ? "probe credentials required: send Authorization: Bearer <the group's token in api.probe.tokens> (probe.api.token on the probe)"
          : "credentials required: send the header Authorization: Bearer <api.token>, or log in at /login");
      return;
    }
    if (who.access() == Principal.Access.PROBE) {
      if (!probeRoute) {
        error(ctx, 403, "a probe token serves /api/v1/probe/* only: use api.token or api.read.token for the rest of the API");
        return;
      }
      String group = ctx.queryParams().get("group");
      if (group != null && !who.servesGroup(group)) {
        error(ctx, 403, "this probe token is for group '" + who.group() + "', not '" + Http.printable(group) + "': use that group's token from api.probe.tokens");
        return;
      }
    }
    ctx.put(Principal.KEY, who);
    if (isMutation(ctx.request().method())) {
      audit.onEnd(ctx, who);
      if (!who.mayChange()) {
        error(ctx, 403, "read-only credentials (" + who.role() + "): this change needs the operator's api.token or console login");
        return;
      }
      if (Frontline.isMultipart(ctx)) {
        error(ctx, 415, "multipart bodies are not accepted: send JSON (application/json)");
        return;
      }
      if (cookie && !Frontline.sameOrigin(ctx)) {
        error(ctx, 403, "cross-origin request refused: a change with the console's session must come from the console's own pages");
        return;
      }
      if (cookie && !Frontline.mediaType(ctx).equals("application/json")) {
        error(ctx, 415, "a change with the console's session must send Content-Type: application/json");
        return;
      }
    }
    ctx.next();
  }
}
