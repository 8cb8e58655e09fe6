package dev.inspection.admin;

import io.vertx.core.Handler;
import io.vertx.core.MultiMap;
import io.vertx.core.net.HostAndPort;
import io.vertx.ext.web.RoutingContext;
import java.net.URI;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The first handler of every request (issue 10): gives it a request id ({@code X-Request-Id}, named in
 * the log and in a 500's body) and puts the security headers on every answer, HTML or JSON: a
 * Content-Security-Policy without inline scripts, no framing, no MIME sniffing, no referrer to other sites. Also the
 * checks a cookie-authenticated mutation must pass: its Origin (or Referer) names this host.
 */
final class Frontline implements Handler<RoutingContext> {
  static final String REQUEST_ID = "request_id";
  static final String CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self';"
      + " object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

  private final String prefix;
  private final AtomicLong next = new AtomicLong();

  Frontline() {
    byte[] b = new byte[3];
    new SecureRandom().nextBytes(b);
    prefix = HexFormat.of().formatHex(b);
  }

  @Override
  public void handle(RoutingContext ctx) {
    String id = prefix + "-" + Long.toString(next.incrementAndGet(), 36);
    ctx.put(REQUEST_ID, id);
    MultiMap h = ctx.response().headers();
    h.set("X-Request-Id", id);
    h.set("Content-Security-Policy", CSP);
    h.set("X-Frame-Options", "DENY");
    h.set("X-Content-Type-Options", "nosniff");
    h.set("Referrer-Policy", "same-origin");
    if (ctx.normalizedPath().startsWith("/api/") || ctx.normalizedPath().startsWith("/login")) h.set("Cache-Control", "no-store");
    ctx.next();
  }

  static String requestId(RoutingContext ctx) {
    Object id = ctx.get(REQUEST_ID);
    return id == null ? "-" : id.toString();
  }

  /**
   * Whether a browser sent this request from a page of this host: its Origin (else its Referer) must name
   * the Host it was sent to. A request with neither (curl, a script) passes: it carries no ambient cookie
   * of a victim's browser; browsers always send Origin on a cross-site POST.
   */
  static boolean sameOrigin(RoutingContext ctx) {
    String origin = ctx.request().getHeader("Origin");
    if (origin == null) origin = ctx.request().getHeader("Referer");
    if (origin == null) return true;
    HostAndPort asked = ctx.request().authority();
    if (asked == null || origin.equals("null")) return false;
    int defaultPort = ctx.request().isSSL() ? 443 : 80;
    try {
      URI o = URI.create(origin.trim());
      if (o.getHost() == null || o.getScheme() == null) return false;
      int oPort = o.getPort() >= 0 ? o.getPort() : o.getScheme().equalsIgnoreCase("https") ? 443 : 80;
      int aPort = asked.port() >= 0 ? asked.port() : defaultPort;
      return o.getHost().equalsIgnoreCase(asked.host()) && oPort == aPort;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /** The request's media type without parameters, lower case; "" when it has none. */
  static String mediaType(RoutingContext ctx) {
    String ct = ctx.request().getHeader("Content-Type");
    if (ct == null) return "";
    int semi = ct.indexOf(';');
    return (semi < 0 ? ct : ct.substring(0, semi)).trim().toLowerCase(Locale.ROOT);
  }

  static boolean isMultipart(RoutingContext ctx) {
    return mediaType(ctx).startsWith("multipart/");
  }
}
