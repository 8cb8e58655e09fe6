package dev.inspection.admin;

import static dev.inspection.admin.Http.json;

import dev.inspection.scheduler.AuditLog;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP side of the audit log (issue 10): every authenticated API mutation is written when its answer
 * has gone out (so refusals — a read-only token, a cross-origin cookie — are there too, with their
 * status), and so is every checked console login; {@code GET /api/v1/audit} reads it newest first. A
 * node without a database (the unit tests' server) passes a null log and audits nothing.
 */
final class Audit implements Routes {
  private static final Logger log = LoggerFactory.getLogger(Audit.class);

  private final AuditLog store;

  Audit(AuditLog store) {
    this.store = store;
  }

  @Override
  public void mount(Router r) {
    if (store == null) return;
    r.get("/api/v1/audit").handler(ctx -> {
      String b = ctx.queryParams().get("before");
      Long before;
      try {
        before = b == null ? null : Long.valueOf(b.trim());
      } catch (NumberFormatException e) {
        throw new dev.inspection.common.ApiError(400, "before must be an audit entry id (a number): use next_before of the previous page");
      }
      store.page(before, Http.intParam(ctx, "limit", 100, 1, 1000)).onSuccess(p -> json(ctx, 200, p)).onFailure(ctx::fail);
    });
  }

  /** Writes the entry for this mutation once it is answered. */
  void onEnd(RoutingContext ctx, Principal who) {
    if (store == null) return;
    ctx.addEndHandler(ar -> {
      Route route = ctx.currentRoute();
      String path = route == null || route.getPath() == null || route.getPath().endsWith("*") ? ctx.normalizedPath()
          : route.getPath().replaceAll(":([a-z_]+)", "{$1}");
      String target = ctx.pathParams().isEmpty() ? ctx.request().uri() : String.join("/", ctx.pathParams().values());
      write(new AuditLog.Entry(who.name(), who.role(), ctx.request().method().name() + " " + path, target, remote(ctx),
          ctx.response().getStatusCode()));
    });
  }

  /** A console login that was checked (not one refused by the throttle before the check). */
  void login(RoutingContext ctx, String user, Principal who, int status) {
    if (store == null) return;
    write(new AuditLog.Entry(who == null ? Http.printable(user) : who.name(), who == null ? "-" : who.role(), who == null ? "login failed" : "login",
        "/login", remote(ctx), status));
  }

  private void write(AuditLog.Entry e) {
    store.write(e).onFailure(x -> log.warn("cannot write the audit entry '{} {}' by {} ({})", e.action(), e.target(), e.who(), x.getMessage()));
  }

  static String remote(RoutingContext ctx) {
    return ctx.request().remoteAddress() == null ? null : ctx.request().remoteAddress().hostAddress();
  }
}
