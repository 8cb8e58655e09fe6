package dev.inspection.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonLineEncoderTest {
  private static LoggingEvent event(LoggerContext context, String message, Throwable thrown) {
    return event(context, message, thrown, Map.of());
  }

  private static LoggingEvent event(LoggerContext context, String message, Throwable thrown, Map<String, String> mdc) {
    LoggingEvent e = new LoggingEvent("fqcn", context.getLogger("dev.inspection.worker.SlotProcessor"), Level.WARN, message, thrown, null);
    e.setThreadName("vert.x-eventloop-thread-1");
    e.setInstant(Instant.parse("2026-12-02T11:47:30.123Z"));
    e.setMDCPropertyMap(mdc);
    return e;
  }

  private static LoggerContext context(String node, String role) {
    LoggerContext c = new LoggerContext();
    if (node != null) {
      c.putProperty(LogSetup.NODE, node);
      c.putProperty(LogSetup.ROLE, role);
    }
    return c;
  }

  @Test
  void oneLineWithIsoTimestampInTheZoneNodeRoleAndTheFixedFields() {
    LoggingEvent e = event(context("w-1", "worker"), "batch of 12 committed", null);
    String line = new JsonLineEncoder(ZoneId.of("Europe/Berlin")).line(e);
    assertTrue(line.endsWith("}\n") && line.indexOf('\n') == line.length() - 1, line);
    JsonObject j = new JsonObject(line);
    assertEquals("2026-12-02T12:47:30.123+01:00", j.getString("timestamp"));
    assertEquals(Instant.parse("2026-12-02T11:47:30.123Z"), OffsetDateTime.parse(j.getString("timestamp")).toInstant());
    assertEquals("WARN", j.getString("level"));
    assertEquals("dev.inspection.worker.SlotProcessor", j.getString("logger"));
    assertEquals("vert.x-eventloop-thread-1", j.getString("thread"));
    assertEquals("batch of 12 committed", j.getString("message"));
    assertEquals("w-1", j.getString("node"));
    assertEquals("worker", j.getString("role"));
    assertFalse(j.containsKey("exception"));
  }

  @Test
  void utcIsWrittenWithZ() {
    JsonObject j = new JsonObject(new JsonLineEncoder(ZoneId.of("UTC")).line(event(context("n", "all"), "m", null)));
    assertEquals("2026-12-02T11:47:30.123Z", j.getString("timestamp"));
  }

  @Test
  void exceptionIsTheWholeStackInOneFieldAndPasswordsAreMasked() {
    Exception boom = new IllegalStateException("cannot reach redis://u:hunter2@cache:6379", new RuntimeException("FATAL: terminating connection (57P01)"));
    LoggingEvent e = event(context("s-1", "scheduler"), "lost redis://u:hunter2@cache:6379 \"quoted\"\tand tabbed", boom);
    String line = new JsonLineEncoder(ZoneId.of("UTC")).line(e);
    assertFalse(line.contains("hunter2"), line);
    JsonObject j = new JsonObject(line);
    assertEquals("lost redis://u:***@cache:6379 \"quoted\"\tand tabbed", j.getString("message"));
    String stack = j.getString("exception");
    assertTrue(stack.startsWith("java.lang.IllegalStateException: cannot reach redis://u:***@cache:6379"), stack);
    assertTrue(stack.contains("\tat dev.inspection.config.JsonLineEncoderTest"), stack);
    assertTrue(stack.contains("Caused by: java.lang.RuntimeException: FATAL: terminating connection (57P01)"), stack);
  }

  @Test
  void mdcAndKeyValuePairsAreFieldsButNeverReplaceTheFixedOnes() {
    LoggingEvent e = event(context("w-1", "worker"), "m", null, Map.of("trace", "t-9", "level", "spoofed"));
    e.addKeyValuePair(new org.slf4j.event.KeyValuePair(LogSetup.SLOT, 17));
    e.addKeyValuePair(new org.slf4j.event.KeyValuePair("node", "other"));
    JsonObject j = new JsonObject(new JsonLineEncoder(ZoneId.of("UTC")).line(e));
    assertEquals("t-9", j.getString("trace"));
    assertEquals("17", j.getString("slot"));
    assertEquals("WARN", j.getString("level"));
    assertEquals("w-1", j.getString("node"));
  }

  @Test
  void beforeTheConfigurationIsReadThereIsNoNodeField() {
    JsonObject j = new JsonObject(new JsonLineEncoder(ZoneId.of("UTC")).line(event(context(null, null), "reading config", null)));
    assertFalse(j.containsKey("node"));
  }

  @Test
  void controlCharactersAreEscaped() {
    StringBuilder out = JsonLineEncoder.quote(new StringBuilder(), "a\u0001b\\c\r\n");
    assertEquals("\"a\\u0001b\\\\c\\r\\n\"", out.toString());
  }

  @Test
  void textContextShowsNodeAndRole() {
    LoggingEvent e = event(context("w-1", "worker"), "m", null);
    assertEquals("w-1/worker", new ContextConverter().convert(e));
    assertEquals("-", new ContextConverter().convert(event(context(null, null), "m", null)));
  }

  @Test
  void logFormatIsTextOrJsonAndAnythingElseNamesTheKey() {
    assertEquals(LogSetup.Format.TEXT, LogSetup.format(Config.of(Map.of())));
    assertEquals(LogSetup.Format.JSON, LogSetup.format(Config.of(Map.of("log.format", "JSON"))));
    ConfigException e = assertThrows(ConfigException.class, () -> LogSetup.format(Config.of(Map.of("log.format", "xml"))));
    assertEquals("log.format must be text or json, not 'xml'", e.getMessage());
  }
}
