package dev.inspection.admin;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Set;

/**
 * The API token and the console login (DESIGN.md §6). There are no default credentials: outside
 * {@code demo.mode} a node that serves the API refuses to start with a missing or placeholder secret;
 * in demo mode missing ones are generated and printed once, to the console only. Secrets never reach a
 * log line or an API answer ({@link Config#isSecret}); comparisons take constant time.
 */
public final class Credentials {
  private static final Set<String> PLACEHOLDERS = Set.of("changeme", "change-me", "change_me", "secret", "password", "admin", "token",
      "default", "example", "test", "todo", "xxx", "replace-me", "replaceme", "your-token", "your-password");

  private final String token;
  private final String user;
  private final String password;

  private Credentials(String token, String user, String password) {
    this.token = token;
    this.user = user;
    this.password = password;
  }

  /** The credentials in force, or a ConfigException naming the key and saying what to do. */
  public static Credentials resolve(Config c, PrintStream console) {
    String token = c.get(Keys.API_TOKEN).trim();
    String user = c.get(Keys.CONSOLE_USER).trim();
    String password = c.get(Keys.CONSOLE_PASSWORD);
    boolean demo = c.getBool(Keys.DEMO_MODE);
    boolean generated = false;
    if (demo && token.isEmpty()) {
      token = random(24);
      generated = true;
    }
    if (demo && password.isEmpty()) {
      password = random(12);
      generated = true;
    }
    String why = weakness(token, 16);
    if (why != null) {
      throw new ConfigException("api.token " + why + ": set INSPECT_API_TOKEN to a random secret (e.g. `openssl rand -hex 32`), or run with"
          + " --demo.mode=true to have one generated for a demo");
    }
    why = weakness(password, 12);
    if (why != null) {
      throw new ConfigException("console.password " + why + ": set INSPECT_CONSOLE_PASSWORD (at least 12 characters), or run with"
          + " --demo.mode=true to have one generated for a demo");
    }
    if (user.isEmpty()) throw new ConfigException("console.user is empty: set the console login name");
    if (generated) {
      // printed once, to the terminal, never to a log
      console.println("demo mode: API token " + token + " ; console login " + user + " / " + password + " (shown once; set api.token and"
          + " console.password to keep them)");
    }
    return new Credentials(token, user, password);
  }

  static String weakness(String secret, int minLength) {
    if (secret == null || secret.isBlank()) return "is missing";
    String s = secret.trim().toLowerCase(Locale.ROOT);
    if (PLACEHOLDERS.contains(s) || s.startsWith("<") || s.startsWith("${") || s.matches("(.)\\1*")) return "is a placeholder";
    if (secret.length() < minLength) return "is shorter than " + minLength + " characters";
    return null;
  }

  private static String random(int bytes) {
    byte[] b = new byte[bytes];
    new SecureRandom().nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  public boolean tokenMatches(String presented) {
    return presented != null && same(presented, token);
  }

  public boolean loginMatches(String u, String p) {
    // both compared, always, so the time does not tell which one was wrong
    boolean a = u != null && same(u, user);
    boolean b = p != null && same(p, password);
    return a & b;
  }

  public String user() {
    return user;
  }

  private static boolean same(String a, String b) {
    return MessageDigest.isEqual(sha(a), sha(b));
  }

  private static byte[] sha(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
