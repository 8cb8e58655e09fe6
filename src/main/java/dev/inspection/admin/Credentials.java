package dev.inspection.admin;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.ConfigKey;
import dev.inspection.config.Keys;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The API tokens and the console logins (DESIGN.md §6, issue 10). There are no default credentials:
 * outside {@code demo.mode} a node that serves the API refuses to start with a missing or placeholder
 * secret; in demo mode missing ones are generated and printed once, to the console only. Roles: the
 * operator ({@code api.token}, {@code console.user}) reads and changes; the optional reader
 * ({@code api.read.token}, {@code console.readonly.user}) only reads; a probe token
 * ({@code api.probe.tokens}) serves its group's {@code /api/v1/probe/*}. Console passwords are kept
 * only as PBKDF2 hashes ({@link PasswordHash}); secrets never reach a log line or an API answer
 * ({@link Config#isSecret}); token comparisons take constant time.
 */
public final class Credentials {
  private static final Set<String> PLACEHOLDERS = Set.of("changeme", "change-me", "change_me", "secret", "password", "admin", "token",
      "default", "example", "test", "todo", "xxx", "replace-me", "replaceme", "your-token", "your-password");

  private final String token;
  private final String readToken;
  private final Map<String, String> probeTokens;
  private final String user;
  private final PasswordHash password;
  private final String readUser;
  private final PasswordHash readPassword;
  /** Derived for an unknown user name, so a wrong name costs as long as a wrong password. */
  private final PasswordHash decoy = PasswordHash.of("decoy-" + random(8));

  private Credentials(String token, String readToken, Map<String, String> probeTokens, String user, PasswordHash password, String readUser,
      PasswordHash readPassword) {
    this.token = token;
    this.readToken = readToken;
    this.probeTokens = Map.copyOf(probeTokens);
    this.user = user;
    this.password = password;
    this.readUser = readUser;
    this.readPassword = readPassword;
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
    PasswordHash hash = hash(Keys.CONSOLE_PASSWORD, password, "set INSPECT_CONSOLE_PASSWORD (at least 12 characters), or run with"
        + " --demo.mode=true to have one generated for a demo");
    if (user.isEmpty()) throw new ConfigException("console.user is empty: set the console login name");
    String readToken = c.get(Keys.API_READ_TOKEN).trim();
    if (!readToken.isEmpty()) {
      why = weakness(readToken, 16);
      if (why != null) throw new ConfigException("api.read.token " + why + ": set a random secret (e.g. `openssl rand -hex 32`) or leave it empty");
      if (readToken.equals(token)) throw new ConfigException("api.read.token equals api.token: give the read-only role its own token");
    }
    Map<String, String> probes = probeTokens(c.get(Keys.API_PROBE_TOKENS), token, readToken);
    String readUser = c.get(Keys.CONSOLE_READONLY_USER).trim();
    PasswordHash readHash = null;
    if (!readUser.isEmpty()) {
      if (readUser.equals(user)) throw new ConfigException("console.readonly.user equals console.user: choose another name for the read-only login");
      readHash = hash(Keys.CONSOLE_READONLY_PASSWORD, c.get(Keys.CONSOLE_READONLY_PASSWORD), "set INSPECT_CONSOLE_READONLY_PASSWORD (at least"
          + " 12 characters) or leave console.readonly.user empty");
    }
    if (generated) {
      // printed once, to the terminal, never to a log
      console.println("demo mode: API token " + token + " ; console login " + user + " / " + password + " (shown once; set api.token and"
          + " console.password to keep them)");
    }
    return new Credentials(token, readToken, probes, user, hash, readUser, readHash);
  }

  /** A plain password (checked, then hashed) or a {@code pbkdf2$...} value (parsed). */
  private static PasswordHash hash(ConfigKey key, String value, String todo) {
    if (PasswordHash.isEncoded(value)) {
      try {
        return PasswordHash.parse(value);
      } catch (IllegalArgumentException e) {
        throw new ConfigException(key.name() + " " + e.getMessage() + ": give a plain password or a value printed by"
            + " `java -cp node.jar dev.inspection.admin.PasswordHash`");
      }
    }
    String why = weakness(value, 12);
    if (why != null) throw new ConfigException(key.name() + " " + why + ": " + todo);
    return PasswordHash.of(value);
  }

  /** {@code group=token,group=token}: each token strong and distinct from the API tokens. */
  static Map<String, String> probeTokens(String spec, String token, String readToken) {
    Map<String, String> out = new LinkedHashMap<>();
    if (spec == null || spec.isBlank()) return out;
    for (String pair : spec.split(",")) {
      int eq = pair.indexOf('=');
      String group = eq < 0 ? "" : pair.substring(0, eq).trim();
      String t = eq < 0 ? "" : pair.substring(eq + 1).trim();
      if (group.isEmpty() || !group.matches("[A-Za-z0-9._*-]+")) {
        throw new ConfigException("api.probe.tokens: every entry must be group=token (groups separated by commas; the group * serves every group)");
      }
      String why = weakness(t, 16);
      if (why != null) throw new ConfigException("api.probe.tokens: the token of group '" + group + "' " + why + ": give each group a random secret");
      if (t.equals(token) || t.equals(readToken)) {
        throw new ConfigException("api.probe.tokens: the token of group '" + group + "' equals an API token: give probes their own tokens");
      }
      if (out.put(group, t) != null) throw new ConfigException("api.probe.tokens: group '" + group + "' appears twice");
    }
    return out;
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

  /** Who a bearer token is: the operator, the reader, a probe group's token; null when none matches. Every candidate is compared. */
  Principal bearer(String presented) {
    if (presented == null || presented.isEmpty()) return null;
    Principal found = null;
    if (same(presented, token)) found = new Principal("api-token", Principal.Access.OPERATOR, null);
    if (!readToken.isEmpty() && same(presented, readToken)) found = new Principal("api-read-token", Principal.Access.READER, null);
    for (Map.Entry<String, String> e : probeTokens.entrySet()) {
      if (same(presented, e.getValue())) found = new Principal("probe-token:" + e.getKey(), Principal.Access.PROBE, e.getKey());
    }
    return found;
  }

  public boolean tokenMatches(String presented) {
    Principal p = bearer(presented);
    return p != null && p.access() == Principal.Access.OPERATOR;
  }

  /** The console login's principal, or null. Slow (one PBKDF2 derivation whatever the name): call it off the event loop. */
  Principal login(String u, String p) {
    if (u == null || p == null) {
      decoy.matches("x");
      return null;
    }
    if (same(u, user)) return password.matches(p) ? new Principal(user, Principal.Access.OPERATOR, null) : null;
    if (readPassword != null && same(u, readUser)) return readPassword.matches(p) ? new Principal(readUser, Principal.Access.READER, null) : null;
    decoy.matches(p);
    return null;
  }

  public boolean loginMatches(String u, String p) {
    return login(u, p) != null;
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
