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
  void theConfigDescriptionMasksEverySecret() {
    String described = String.join("\n", config("pg.password", "pg-secret-value").describe());
    assertFalse(described.contains(TOKEN) || described.contains(PASSWORD) || described.contains("pg-secret-value"), described);
  }
}
