package dev.inspection.admin;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CredentialsTest {
  private static final String TOKEN = "0123456789abcdef0123";
  private static final String PASSWORD = "a-long-password-42";

  private static Config config(String... kv) {
    Map<String, String> m = new HashMap<>(Map.of("api.token", TOKEN, "console.password", PASSWORD));
    for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
    return Config.of(m);
  }

  @Test
  void aMissingOrPlaceholderSecretStopsStartUpNamingTheKeyAndWhatToDo() {
    for (String bad : new String[] {"", "changeme", "CHANGE_ME", "<token>", "${API_TOKEN}", "aaaaaaaaaaaaaaaaaaaa", "short"}) {
      ConfigException e = assertThrows(ConfigException.class, () -> Credentials.resolve(config("api.token", bad), System.out), bad);
      assertTrue(e.getMessage().startsWith("api.token "), e.getMessage());
      assertTrue(e.getMessage().contains("INSPECT_API_TOKEN"), e.getMessage());
      assertFalse(!bad.isEmpty() && e.getMessage().contains(bad) && bad.length() > 6, "the refusal does not echo the secret: " + e.getMessage());
    }
    ConfigException p = assertThrows(ConfigException.class, () -> Credentials.resolve(config("console.password", "password"), System.out));
    assertTrue(p.getMessage().startsWith("console.password is a placeholder"), p.getMessage());
  }

  @Test
  void demoModeGeneratesMissingSecretsAndPrintsThemOnce() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Credentials c = Credentials.resolve(config("api.token", "", "console.password", "", "demo.mode", "true"), new PrintStream(out, true));
    String printed = out.toString(StandardCharsets.UTF_8);
    assertTrue(printed.startsWith("demo mode: API token "), printed);
    String token = printed.substring("demo mode: API token ".length(), printed.indexOf(' ', "demo mode: API token ".length()));
    assertTrue(c.tokenMatches(token));
    assertFalse(c.tokenMatches(TOKEN));
  }

  @Test
  void configuredSecretsAreNotPrintedAndCompareExactly() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Credentials c = Credentials.resolve(config(), new PrintStream(out, true));
    assertTrue(out.toString(StandardCharsets.UTF_8).isEmpty());
    assertTrue(c.tokenMatches(TOKEN));
    assertFalse(c.tokenMatches(TOKEN + "x"));
    assertTrue(c.loginMatches("operator", PASSWORD));
    assertFalse(c.loginMatches("operator", PASSWORD.toUpperCase()));
    assertFalse(c.loginMatches("someone", PASSWORD));
  }

  @Test
  void rolesComeFromTheirCredentials() {
    Credentials c = Credentials.resolve(config("api.read.token", "read-0123456789abcdef", "api.probe.tokens", "east=probe-east-0123456789, *=probe-all-0123456789",
        "console.readonly.user", "viewer", "console.readonly.password", PasswordHash.of("viewer-password-1").encoded()), System.out);
    assertTrue(c.bearer(TOKEN).mayChange());
    assertFalse(c.bearer("read-0123456789abcdef").mayChange());
    assertTrue(c.bearer("probe-east-0123456789").servesGroup("east"));
    assertFalse(c.bearer("probe-east-0123456789").servesGroup("west"));
    assertTrue(c.bearer("probe-all-0123456789").servesGroup("west"));
    assertFalse(c.bearer(TOKEN).servesGroup("east"), "the operator is no probe");
    assertTrue(c.bearer("nope-0123456789abcdef") == null);
    assertTrue(c.login("operator", PASSWORD).mayChange());
    assertFalse(c.login("viewer", "viewer-password-1").mayChange(), "a pbkdf2$ value is accepted as the hash");
    assertTrue(c.login("viewer", PASSWORD) == null);
  }

  @Test
  void badRoleSettingsStopStartUpNamingTheKey() {
    for (String[] bad : new String[][] {{"api.read.token", TOKEN}, {"api.read.token", "short"}, {"api.probe.tokens", "east"},
        {"api.probe.tokens", "east=short"}, {"api.probe.tokens", "east=" + TOKEN}, {"console.password", "pbkdf2$x$y$z"},
        {"console.readonly.user", "viewer"}, {"console.readonly.user", "operator", "console.readonly.password", "another-password-1"}}) {
      ConfigException e = assertThrows(ConfigException.class, () -> Credentials.resolve(config(bad), System.out), String.join(" ", bad));
      assertTrue(e.getMessage().startsWith(bad[0].equals("console.readonly.user") && bad.length == 2 ? "console.readonly.password" : bad[0]), e.getMessage());
      assertFalse(e.getMessage().contains(TOKEN), "no secret echoed: " + e.getMessage());
    }
  }

  @Test
  void theConfigDescriptionMasksEverySecret() {
    String described = String.join("\n", config("pg.password", "pg-secret-value", "api.probe.tokens", "g=probe-secret-value-1",
        "probe.api.token", "probe-secret-value-2", "api.read.token", "read-secret-value-3", "console.readonly.password", "ro-secret-value-4").describe());
    for (String secret : new String[] {TOKEN, PASSWORD, "pg-secret-value", "probe-secret-value", "read-secret-value", "ro-secret-value"}) {
      assertFalse(described.contains(secret), described);
    }
  }
}
