package dev.inspection.admin;

import static dev.inspection.admin.Http.error;
import static dev.inspection.admin.Http.signedIn;

import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;

/** Every API route but the probes' inventory/pacing and the OpenAPI text needs the token or a console session. */
final class ApiAuth implements Handler<RoutingContext> {
  private final Credentials credentials;

  ApiAuth(Credentials credentials) {
    this.credentials = credentials;
  }

  @Override
  public void handle(RoutingContext ctx) {
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
}
