package dev.inspection.admin;

import static dev.inspection.admin.Http.json;

import dev.inspection.scheduler.AuditLog;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP side of the audit log (issue 10): every authenticated API mutation is written when its answer
 * has gone out (so refusals — a read-only token, a cross-origin cookie — are there too, with their
 * status), and so is every checked console login; {@code GET /api/v1/audit} reads it newest first. Each entry is
 * also one INFO line of the logger {@code audit} (issue 15 item 4), written whether or not the database takes it, so a
 * log shipper sees every mutation; its fields (a {@code log.format=json} line's) are who, who_role (the
 * principal's role: {@code role} is the node's), method, path, action,
 * target, status, outcome, remote and request_id. A node without a database (the unit tests' server) passes a null
 * log and audits nothing.
 */
final class Audit implements Routes {
  private static final Logger log = LoggerFactory.getLogger(Audit.class);
  private static final Logger stream = LoggerFactory.getLogger("audit");

  /** A resource route: what an audited request is named by, whichever handler answered it. */
  private record Template(HttpMethod method, String name, Pattern regex) {}

  private final AuditLog store;
  private Router router;
  private List<Template> templates;

  Audit(AuditLog store) {
    this.store = store;
  }

  @Override
  public void mount(Router r) {
    router = r;
    if (store == null) return;
    r.get("/api/v1/audit").handler(ctx -> {
      Long before = ApiContract.query(ctx, "before") instanceof Number n ? n.longValue() : null;
      store.page(before, Http.intParam(ctx, "limit")).onSuccess(p -> json(ctx, 200, p)).onFailure(ctx::fail);
    });
  }

  /** Writes the entry for this mutation once it is answered. */
  void onEnd(RoutingContext ctx, Principal who) {
    if (store == null) return;
    ctx.addEndHandler(ar -> {
      String method = ctx.request().method().name();
      String path = ctx.normalizedPath();
      String action = method + " " + path;
      String target = ctx.request().uri();
      for (Template t : templates()) {
        Matcher m = t.regex().matcher(path);
        if (t.method().name().equals(method) && m.matches()) {
          action = method + " " + t.name();
          if (m.groupCount() > 0) {
            List<String> values = new ArrayList<>();
            for (int g = 1; g <= m.groupCount(); g++) values.add(m.group(g));
            target = String.join("/", values);
          }
          break;
        }
      }
      write(ctx, new AuditLog.Entry(who.name(), who.role(), action, target, remote(ctx), ctx.response().getStatusCode()));
    });
  }

  /** The router's resource routes as patterns, read once every route is mounted. */
  private List<Template> templates() {
    if (templates == null) {
      List<Template> out = new ArrayList<>();
      for (Route route : router.getRoutes()) {
        String p = route.getPath();
        if (p == null || !p.startsWith("/api/v1/") || p.endsWith("*") || p.endsWith("/") || route.methods() == null) continue;
        String regex = Pattern.quote(p).replaceAll(":([a-z_]+)", "\\\\E([^/]+)\\\\Q");
        for (HttpMethod m : route.methods()) out.add(new Template(m, Http.template(p), Pattern.compile(regex)));
      }
      templates = out;
    }
    return templates;
  }

  /** A console login that was checked (not one refused by the throttle before the check). */
  void login(RoutingContext ctx, String user, Principal who, int status) {
    if (store == null) return;
    write(ctx, new AuditLog.Entry(who == null ? Http.printable(user) : who.name(), who == null ? "-" : who.role(),
        who == null ? "login failed" : "login", "/login", remote(ctx), status));
  }

  private void write(RoutingContext ctx, AuditLog.Entry e) {
    store.write(e).onFailure(x -> log.warn("cannot write the audit entry '{} {}' by {} ({})", e.action(), e.target(), e.who(), x.getMessage()));
    String method = ctx.request().method().name();
    String path = ctx.normalizedPath(); // without the query: a mutation's arguments are in its body, never logged
    stream.atInfo().addKeyValue("who", e.who()).addKeyValue("who_role", e.role()).addKeyValue("method", method).addKeyValue("path", path)
        .addKeyValue("action", e.action()).addKeyValue("target", e.target()).addKeyValue("status", e.status())
        .addKeyValue("outcome", e.outcome()).addKeyValue("remote", e.remote()).addKeyValue("request_id", (Object) ctx.get(Frontline.REQUEST_ID))
        .log("{} {} {} {} by {} ({}) from {}", e.action(), e.target(), e.status(), e.outcome(), e.who(), e.role(), e.remote());
  }

  static String remote(RoutingContext ctx) {
    return ctx.request().remoteAddress() == null ? null : ctx.request().remoteAddress().hostAddress();
  }
}
