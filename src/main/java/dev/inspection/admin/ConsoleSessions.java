package dev.inspection.admin;

import io.vertx.core.http.Cookie;
import io.vertx.core.http.CookieSameSite;
import io.vertx.ext.web.RoutingContext;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The console's sessions (issue 10), kept here rather than in a generic session store so that nothing
 * but a successful login ever creates one: a request that only reads (a probe's poll, a health check,
 * the login page, an API call with or without a cookie) is looked up and never stored, and answers no
 * cookie. At most {@code max} live at once (a login beyond answers 503); one unused for {@code idleMs}
 * ends. The cookie is HttpOnly, SameSite=Strict, with a 256-bit random id, replaced at every login.
 */
final class ConsoleSessions {
  static final String COOKIE = "inspection_session";
  static final String KEY = "console_session";

  private record Live(Principal who, long lastSeen) {}

  private final Map<String, Live> live = new ConcurrentHashMap<>();
  private final SecureRandom random = new SecureRandom();
  private final int max;
  private final long idleMs;
  private final LongSupplier clock;

  ConsoleSessions(int max, long idleMs, LongSupplier clock) {
    this.max = max;
    this.idleMs = idleMs;
    this.clock = clock;
  }

  /** Handler: puts the request's live session (if any) where {@link Http#sessionPrincipal} finds it; never creates one. */
  void attach(RoutingContext ctx) {
    Principal who = lookup(id(ctx));
    if (who != null) ctx.put(KEY, who);
    ctx.next();
  }

  /** A new session for {@code who}, its cookie set on the answer (the request's old one ends); false when {@code max} are live. */
  boolean create(RoutingContext ctx, Principal who) {
    end(ctx);
    String id = open(who);
    if (id == null) return false;
    ctx.response().addCookie(Cookie.cookie(COOKIE, id).setPath("/").setHttpOnly(true).setSameSite(CookieSameSite.STRICT)
        .setSecure(ctx.request().isSSL()));
    return true;
  }

  /** Ends the request's session (logout, or before a new login) and clears its cookie. */
  void end(RoutingContext ctx) {
    String id = id(ctx);
    if (id == null) return;
    close(id);
    ctx.response().addCookie(Cookie.cookie(COOKIE, "").setPath("/").setMaxAge(0).setHttpOnly(true).setSameSite(CookieSameSite.STRICT));
  }

  /** The live session's principal, its idle clock restarted; null for an unknown, ended or idle-expired id. */
  Principal lookup(String id) {
    if (id == null) return null;
    long now = clock.getAsLong();
    Live l = live.get(id);
    if (l == null) return null;
    if (now - l.lastSeen() > idleMs) {
      live.remove(id, l);
      return null;
    }
    live.put(id, new Live(l.who(), now));
    return l.who();
  }

  /** A new session's id; null when {@code max} sessions are live (after the idle ones were forgotten). */
  String open(Principal who) {
    sweep();
    if (live.size() >= max) return null;
    byte[] b = new byte[32];
    random.nextBytes(b);
    String id = Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    live.put(id, new Live(who, clock.getAsLong()));
    return id;
  }

  void close(String id) {
    live.remove(id);
  }

  /** Forgets the sessions idle for longer than {@code idleMs}. */
  void sweep() {
    long now = clock.getAsLong();
    live.entrySet().removeIf(e -> now - e.getValue().lastSeen() > idleMs);
  }

  int size() {
    return live.size();
  }

  private static String id(RoutingContext ctx) {
    Cookie c = ctx.request().getCookie(COOKIE);
    return c == null || c.getValue().isEmpty() ? null : c.getValue();
  }
}
