package dev.inspection.admin;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.StringJoiner;

/**
 * What the access log says about one request's target, without secrets: the path, and the query with the value
 * of any parameter whose name speaks of a credential ({@code token}, {@code password}, {@code secret}, {@code key},
 * {@code auth}, {@code session}, {@code sig}) replaced by {@code ***}. Headers (Authorization, Cookie) are never
 * logged at all.
 */
final class AccessLine {
  private AccessLine() {}

  private static final String[] SECRET_WORDS = {"token", "password", "passwd", "secret", "key", "auth", "session", "sig", "credential"};

  /** {@code path} or {@code path?query} with credential values masked. */
  static String target(String path, String query) {
    if (query == null || query.isEmpty()) return path;
    StringJoiner out = new StringJoiner("&", path + "?", "");
    for (String pair : query.split("&", -1)) {
      int eq = pair.indexOf('=');
      String name = eq < 0 ? pair : pair.substring(0, eq);
      out.add(eq >= 0 && secret(name) ? name + "=***" : pair);
    }
    return out.toString();
  }

  static boolean secret(String rawName) {
    String name;
    try {
      name = URLDecoder.decode(rawName, StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
    } catch (IllegalArgumentException badEscape) {
      name = rawName.toLowerCase(Locale.ROOT);
    }
    for (String word : SECRET_WORDS) if (name.contains(word)) return true;
    return false;
  }
}
