package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Issue 15 item 4: a node started with log.format=json writes nothing but JSON objects, one per line, each with an
 * ISO-8601 timestamp carrying its zone, its node and role; its HTTP server writes an access line per request
 * that does not repeat the credentials it was sent; and every audited mutation is a line of the logger {@code audit}.
 */
class LogsIT {
  private static final Pattern UP = Pattern.compile("is up: http://[^:]+:(\\d+)/health/ready");

  private static List<JsonObject> jsonLines(ChildNode node) throws Exception {
    List<JsonObject> out = new ArrayList<>();
    for (String line : Files.readAllLines(node.log)) {
      try {
        out.add(new JsonObject(line));
      } catch (DecodeException notJson) {
        fail("not a JSON line in " + node.log + ": " + line);
      }
    }
    return out;
  }

  @Test
  void aJsonNodeWritesOnlyJsonLinesWithTimeZoneNodeRoleAndAnAccessLineWithoutSecrets() throws Exception {
    try (TestEnv env = new TestEnv(4)) {
      String id = env.name + "-json";
      try (ChildNode node = ChildNode.start(env, "json", Map.of("role", "all", "node.id", id, "log.format", "json"))) {
        JsonObject up = jsonLines(node).stream().filter(l -> l.getString("message", "").contains(") is up:")).findFirst().orElseThrow();
        Matcher m = UP.matcher(up.getString("message"));
        assertTrue(m.find(), up.encode());
        int port = Integer.parseInt(m.group(1));

        String secretInQuery = "sekrit-query-4e1b9";
        Map.Entry<Integer, String> r = TestEnv.http(port, "GET", "/api/v1/devices?limit=1&access_token=" + secretInQuery);
        assertEquals(200, r.getKey(), r.getValue());
        awaitTrue(Duration.ofSeconds(30), "an access line for the request", () -> access(node).isPresent());
        JsonObject a = access(node).orElseThrow();
        assertEquals("GET", a.getString("method"));
        assertEquals("/api/v1/devices?limit=1&access_token=***", a.getString("path"));
        assertEquals("200", a.getString("status"));
        assertNotNull(a.getString("request_id"));
        assertNotNull(a.getString("duration_ms"));

        // a mutation (refused or not, it is audited) is one line of the logger audit, with who did what and the answer
        Map.Entry<Integer, String> drain = TestEnv.http(port, "POST", "/api/v1/workers/nobody-" + env.name + "/drain?session_key=" + secretInQuery);
        awaitTrue(Duration.ofSeconds(30), "an audit line for the drain", () -> audit(node).isPresent());
        JsonObject au = audit(node).orElseThrow();
        assertEquals("POST", au.getString("method"), au.encode());
        assertEquals("/api/v1/workers/nobody-" + env.name + "/drain", au.getString("path"), "no query in the audit line: " + au.encode());
        assertEquals(String.valueOf(drain.getKey()), au.getString("status"), au.encode());
        assertEquals(drain.getKey() < 400 ? "ok" : drain.getKey() < 500 ? "refused" : "failed", au.getString("outcome"), au.encode());
        assertEquals("nobody-" + env.name, au.getString("target"), au.encode());
        assertTrue(au.getString("action").startsWith("POST /api/v1/workers/"), au.encode());
        for (String field : List.of("who", "who_role", "remote", "request_id")) assertNotNull(au.getString(field), field + " in " + au.encode());
        assertEquals("INFO", au.getString("level"));

        List<JsonObject> lines = jsonLines(node);
        assertTrue(lines.size() > 3, "a started node logs more than this: " + lines);
        for (JsonObject l : lines) {
          for (String field : List.of("timestamp", "level", "logger", "thread", "message")) assertNotNull(l.getString(field), field + " in " + l.encode());
          try {
            OffsetDateTime t = OffsetDateTime.parse(l.getString("timestamp"));
            assertTrue(t.getYear() >= 2024, l.encode());
          } catch (DateTimeParseException e) {
            fail("timestamp is not ISO-8601 with a zone: " + l.encode());
          }
          // every line, the node's own and the libraries', from any thread (event loops included)
          assertEquals(id, l.getString("node"), l.encode());
          assertEquals("all", l.getString("role"), l.encode());
        }
        assertTrue(lines.stream().anyMatch(l -> l.getString("thread").startsWith("vert.x-eventloop")), "event-loop lines carry node and role too");
        String all = Files.readString(node.log);
        assertFalse(all.contains(secretInQuery), "the query's token is masked");
        assertFalse(all.contains(TestEnv.API_TOKEN), "the Authorization header is never logged");
      }
    }
  }

  private static Optional<JsonObject> audit(ChildNode node) throws Exception {
    return jsonLines(node).stream().filter(l -> "audit".equals(l.getString("logger")) && l.getString("path", "").contains("/drain")).findFirst();
  }

  private static Optional<JsonObject> access(ChildNode node) throws Exception {
    return jsonLines(node).stream().filter(l -> "access".equals(l.getString("logger")) && l.getString("path", "").startsWith("/api/v1/devices"))
        .findFirst();
  }
}
