package dev.inspection.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Masking of secrets in printed text, and secrets read from files (INSPECT_X_FILE). */
class SecretsTest {
  @Test
  void thePasswordOfAUrlsUserInfoIsMaskedAndTheRestKept() {
    assertEquals("redis://user:***@cache:6379/0", Secrets.redact("redis://user:s3cret@cache:6379/0"));
    assertEquals("redis://:***@cache:6379", Secrets.redact("redis://:s3cret@cache:6379"));
    assertEquals("redis://***@cache", Secrets.redact("redis://s3cret@cache"), "a bare user-info may be a token: masked whole");
    assertEquals("rediss://u:***@h", Secrets.redact("rediss://u:p@ss@h"), "a raw '@' in the password stays inside the mask");
    assertEquals("cannot connect to redis://u:***@h:1 (refused); see http://x:***@y/z?q=a@b",
        Secrets.redact("cannot connect to redis://u:pw@h:1 (refused); see http://x:pw2@y/z?q=a@b"));
    assertEquals("redis://127.0.0.1:6379", Secrets.redact("redis://127.0.0.1:6379"), "nothing to mask");
    assertEquals("mailto user@host", Secrets.redact("mailto user@host"));
  }

  @Test
  void theConfigDescriptionMasksSecretKeysAndUrlPasswords() {
    Config c = Config.of(Map.of("redis.url", "redis://default:redis-pass-1@127.0.0.1:6379", "rabbit.password", "mq-pass-2",
        "probe.inventory.url", "http://probe:inv-pass-3@sched:8080"));
    String described = String.join("\n", c.describe());
    for (String secret : new String[] {"redis-pass-1", "mq-pass-2", "inv-pass-3"}) assertFalse(described.contains(secret), described);
    assertTrue(described.contains("redis.url=redis://default:***@127.0.0.1:6379"), described);
    assertTrue(described.contains("rabbit.password=***"), described);
    assertTrue(described.contains("pg.password=\n") || described.endsWith("pg.password="), "an empty secret shows as empty");
  }

  @Test
  void everyLogLineAndExceptionIsMaskedByTheLogbackConverters() {
    LoggerContext ctx = (LoggerContext) org.slf4j.LoggerFactory.getILoggerFactory();
    ch.qos.logback.classic.Logger logger = ctx.getLogger("secrets-test");
    LoggingEvent event = new LoggingEvent("x", logger, Level.WARN, "Redis at {} refused", new IllegalStateException("no redis://u:exc-pass@h"),
        new Object[] {"redis://u:msg-pass@h:6379"});
    MaskingConverter msg = new MaskingConverter();
    assertEquals("Redis at redis://u:***@h:6379 refused", msg.convert(event));
    MaskingThrowableConverter ex = new MaskingThrowableConverter();
    ex.setContext(ctx);
    ex.start();
    String trace = ex.convert(event);
    assertTrue(trace.contains("no redis://u:***@h"), trace);
    assertFalse(trace.contains("exc-pass"), trace);
  }

  @Test
  void aSecretIsReadFromTheFileItsFileVariableNamesWithoutTheTrailingLineBreak(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("pg");
    Files.writeString(f, "pg pass with spaces \n");
    Config c = Config.load(new String[0], Map.of("INSPECT_PG_PASSWORD_FILE", f.toString()));
    assertEquals("pg pass with spaces ", c.get(Keys.PG_PASSWORD));
    Files.writeString(f, "tok\r\n");
    assertEquals("tok", Config.load(new String[0], Map.of("INSPECT_API_TOKEN_FILE", f.toString())).get(Keys.API_TOKEN));
    assertEquals("--flag wins", Config.load(new String[] {"--api.token=--flag wins"}, Map.of("INSPECT_API_TOKEN_FILE", f.toString())).get(Keys.API_TOKEN));
  }

  @Test
  void anUnreadableFileStopsStartUpNamingTheVariable(@TempDir Path dir) {
    String missing = dir.resolve("nope").toString();
    ConfigException e = assertThrows(ConfigException.class, () -> Config.load(new String[0], Map.of("INSPECT_RABBIT_PASSWORD_FILE", missing)));
    assertTrue(e.getMessage().contains("INSPECT_RABBIT_PASSWORD_FILE") && e.getMessage().contains(missing), e.getMessage());
    ConfigException dirErr = assertThrows(ConfigException.class, () -> Config.load(new String[0], Map.of("INSPECT_RABBIT_PASSWORD_FILE", dir.toString())));
    assertTrue(dirErr.getMessage().contains("INSPECT_RABBIT_PASSWORD_FILE"), dirErr.getMessage());
    ConfigException empty = assertThrows(ConfigException.class, () -> Config.load(new String[0], Map.of("INSPECT_RABBIT_PASSWORD_FILE", "")));
    assertTrue(empty.getMessage().contains("INSPECT_RABBIT_PASSWORD_FILE"), empty.getMessage());
  }

  @Test
  void aValueAndItsFileTogetherAreRefused(@TempDir Path dir) throws Exception {
    Path f = Files.writeString(dir.resolve("t"), "x");
    ConfigException e = assertThrows(ConfigException.class,
        () -> Config.load(new String[0], Map.of("INSPECT_API_TOKEN", "y", "INSPECT_API_TOKEN_FILE", f.toString())));
    assertTrue(e.getMessage().contains("INSPECT_API_TOKEN") && e.getMessage().contains("INSPECT_API_TOKEN_FILE"), e.getMessage());
  }

  @Test
  void aKeyWhoseOwnNameEndsInFileIsStillThatKeyAndUnknownFileVariablesAreRefused() {
    assertEquals("/devices.jsonl", Config.load(new String[0], Map.of("INSPECT_PROBE_INVENTORY_FILE", "/devices.jsonl")).get(Keys.PROBE_INVENTORY_FILE));
    ConfigException e = assertThrows(ConfigException.class, () -> Config.load(new String[0], Map.of("INSPECT_NOPE_FILE", "/x")));
    assertTrue(e.getMessage().contains("INSPECT_NOPE_FILE"), e.getMessage());
  }
}
