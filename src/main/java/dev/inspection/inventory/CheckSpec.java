package dev.inspection.inventory;

import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a device's {@code check_spec} may hold, per check type (issue 13: check specs that cannot hurt the probe).
 * Checked on import and on PATCH, so the probe only ever sees specs it can run; every error names the field
 * ({@code check_spec.port}) and what is allowed. Unknown fields are refused too: a misspelt {@code timeout_ms}
 * would otherwise be silently ignored.
 *
 * <ul>
 *   <li>{@code sim}: {@code fail_rate} 0..1, {@code pattern} {@code random} (default) or {@code flap};</li>
 *   <li>{@code tcp}: {@code host} (a name or an address, 1..253 characters), {@code port} 1..65535, {@code timeout_ms};</li>
 *   <li>{@code http}: {@code url} (absolute http or https with a host), {@code expect_status} 100..599, {@code timeout_ms};</li>
 *   <li>{@code icmp}: {@code host} (an IPv4 or IPv6 address, or a name resolving to one), {@code count} echoes 1..10 (default 3),
 *   {@code interval_ms} between them 10..5000 (default 200), {@code timeout_ms} per echo.</li>
 * </ul>
 * {@code timeout_ms} is 100..60000 and only shortens the probe's own {@code probe.check.timeout.ms}.
 */
public final class CheckSpec {
  private static final Map<String, Set<String>> FIELDS = Map.of(
      "sim", Set.of("fail_rate", "pattern"),
      "tcp", Set.of("host", "port", "timeout_ms"),
      "http", Set.of("url", "expect_status", "timeout_ms"),
      "icmp", Set.of("host", "count", "interval_ms", "timeout_ms"));

  private CheckSpec() {}

  /** Throws {@link IllegalArgumentException} naming the first bad field of {@code spec} for a check of {@code type}. */
  public static void validate(String type, JsonObject spec) {
    Set<String> allowed = FIELDS.get(type);
    if (allowed == null) throw new IllegalArgumentException("check_type must be one of " + FIELDS.keySet() + ", was '" + type + "'");
    for (String k : spec.fieldNames()) {
      if (!allowed.contains(k)) {
        throw new IllegalArgumentException("check_spec." + k + " is not a field of a " + type + " check (allowed: " + allowed + ")");
      }
    }
    switch (type) {
      case "sim" -> {
        if (spec.containsKey("fail_rate")) number(spec, "fail_rate", 0, 1);
        Object pattern = spec.getValue("pattern");
        if (pattern != null && !"random".equals(pattern) && !"flap".equals(pattern)) {
          throw new IllegalArgumentException("check_spec.pattern must be \"random\" or \"flap\", was " + pattern);
        }
      }
      case "tcp" -> {
        host(spec);
        integer(spec, "port", 1, 65_535, true);
        integer(spec, "timeout_ms", 100, 60_000, false);
      }
      case "icmp" -> {
        host(spec);
        integer(spec, "count", 1, 10, false);
        integer(spec, "interval_ms", 10, 5_000, false);
        integer(spec, "timeout_ms", 100, 60_000, false);
      }
      default -> { // http
        url(spec);
        integer(spec, "expect_status", 100, 599, false);
        integer(spec, "timeout_ms", 100, 60_000, false);
      }
    }
  }

  /** The hosts a spec names, whatever its type (its {@code host}, its {@code url}'s host), to judge before it is stored. */
  public static List<String> targets(JsonObject spec) {
    List<String> out = new ArrayList<>();
    if (spec.getValue("host") instanceof String h) out.add(h);
    if (spec.getValue("url") instanceof String u) {
      try {
        String h = new URI(u).getHost();
        if (h != null) out.add(h);
      } catch (URISyntaxException e) {
        // refused by validate, naming the field
      }
    }
    return out;
  }

  private static void host(JsonObject spec) {
    Object h = spec.getValue("host");
    if (!(h instanceof String s) || s.isBlank() || s.length() > 253 || !s.matches("[A-Za-z0-9._:\\-\\[\\]]+")) {
      throw new IllegalArgumentException("check_spec.host must be a host name or an IP address (1..253 characters), was " + show(h));
    }
  }

  private static void url(JsonObject spec) {
    Object u = spec.getValue("url");
    if (!(u instanceof String s) || s.length() > 2048) {
      throw new IllegalArgumentException("check_spec.url must be an http or https URL of at most 2048 characters, was " + show(u));
    }
    try {
      URI uri = new URI(s);
      String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase();
      if (!scheme.equals("http") && !scheme.equals("https")) throw new IllegalArgumentException("check_spec.url must start with http:// or https://, was " + show(s));
      if (uri.getHost() == null || uri.getHost().isBlank()) throw new IllegalArgumentException("check_spec.url has no host: " + show(s));
      if (uri.getUserInfo() != null) throw new IllegalArgumentException("check_spec.url must not carry a user or password: " + show(s));
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("check_spec.url is not a valid URL (" + e.getReason() + "): " + show(s));
    }
  }

  private static void integer(JsonObject spec, String field, long min, long max, boolean required) {
    Object v = spec.getValue(field);
    if (v == null) {
      if (required) throw new IllegalArgumentException("a check of this type needs check_spec." + field + " (" + min + ".." + max + ")");
      return;
    }
    if (!(v instanceof Integer || v instanceof Long) || ((Number) v).longValue() < min || ((Number) v).longValue() > max) {
      throw new IllegalArgumentException("check_spec." + field + " must be a whole number " + min + ".." + max + ", was " + show(v));
    }
  }

  private static void number(JsonObject spec, String field, double min, double max) {
    Object v = spec.getValue(field);
    if (!(v instanceof Number n) || !(n.doubleValue() >= min && n.doubleValue() <= max)) {
      throw new IllegalArgumentException("check_spec." + field + " must be a number " + min + ".." + max + ", was " + show(v));
    }
  }

  private static String show(Object v) {
    if (v == null) return "missing";
    String s = v instanceof String str ? "'" + str + "'" : String.valueOf(v);
    return s.length() > 80 ? s.substring(0, 80) + "…" : s;
  }
}
