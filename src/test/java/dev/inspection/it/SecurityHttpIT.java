package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.Channel;
import dev.inspection.messaging.Priority;
import dev.inspection.node.Node;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Issue 10, the HTTP surface, played as an attacker against one real scheduler node: anonymous multipart
 * and oversized bodies, sessions under anonymous polling, the probe inventory with and without the right
 * group's token, password guessing, the read-only role on every mutation, the audit log of every
 * mutation, security headers, cross-origin cookie posts, and what a 500 gives away.
 */
class SecurityHttpIT {
  private static final HttpClient HTTP = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();
  private static final String JSON = "application/json";
  private static final String FORM = "application/x-www-form-urlencoded";

  /** Every mutation of the API, with a body it would accept. */
  private static final List<String[]> MUTATIONS = List.of(
      new String[] {"POST", "/api/v1/workers/nobody/drain", "{}"},
      new String[] {"POST", "/api/v1/workers/nobody/quarantine", "{}"},
      new String[] {"PATCH", "/api/v1/devices/sec-1", "{\"priority\":1}"},
      new String[] {"POST", "/api/v1/devices/import", "[{\"device_id\":\"sec-2\",\"check_type\":\"sim\"}]"},
      new String[] {"POST", "/api/v1/alerts/sec-1/device.offline/ack", "{\"note\":\"x\"}"},
      new String[] {"POST", "/api/v1/dead-letters/replay", "{\"ids\":[999999]}"},
      new String[] {"POST", "/api/v1/dead-letters/discard", "{\"ids\":[999999]}"});

  private record Res(int status, String body, HttpResponse<String> raw) {
    JsonObject json() {
      return new JsonObject(body);
    }

    String header(String name) {
      return raw.headers().firstValue(name).orElse(null);
    }

    List<String> cookies() {
      return raw.headers().allValues("Set-Cookie");
    }
  }

  private static Res send(int port, String method, String path, String body, Map<String, String> headers) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(30))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    headers.forEach(b::header);
    HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    return new Res(r.statusCode(), r.body(), r);
  }

  private static Map<String, String> bearer(String token) {
    return Map.of("Authorization", "Bearer " + token, "Content-Type", JSON);
  }

  private static Res login(int port, String user, String password, Map<String, String> extra) throws Exception {
    Map<String, String> h = new LinkedHashMap<>(Map.of("Content-Type", FORM));
    h.putAll(extra);
    return send(port, "POST", "/login", "username=" + user + "&password=" + password, h);
  }

  /** The session cookie ("name=value") a successful login set. */
  private static String sessionOf(Res login) {
    assertEquals(303, login.status(), login.body());
    assertEquals("/console/", login.header("Location"));
    String c = login.cookies().stream().filter(x -> x.startsWith("inspection_session=") && !x.startsWith("inspection_session=;"))
        .findFirst().orElseThrow(() -> new AssertionError("no session cookie: " + login.cookies()));
    return c.substring(0, c.indexOf(';'));
  }

  @Test
  void theHttpSurfaceHoldsAgainstAnOutsider() throws Exception {
    Path uploads = Path.of("file-uploads");
    if (Files.isDirectory(uploads)) {
      // left by an older build's BodyHandler.create(): this run must not create it again
      try (var files = Files.walk(uploads)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    try (TestEnv env = new TestEnv(2); Channel ch = env.channel()) {
      Node node = env.start(Map.of("role", "scheduler", "node.id", env.name + "-s", "console.sessions.max", "3",
          "console.login.free.failures", "3", "http.body.max.bytes", "4096", "http.import.max.bytes", "65536",
          "api.probe.tokens", "default=" + TestEnv.PROBE_TOKEN + ",east=" + TestEnv.PROBE_EAST_TOKEN));
      int port = node.httpPort();
      String origin = "http://127.0.0.1:" + port;

      // 1. bodies: nothing is read before the credentials, never to disk, and never beyond the route's limit
      String boundary = "b0undary";
      String multipart = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
          + "A".repeat(20_000) + "\r\n--" + boundary + "--\r\n";
      Map<String, String> mp = Map.of("Content-Type", "multipart/form-data; boundary=" + boundary);
      for (String path : List.of("/api/v1/probe/inventory", "/api/v1/openapi.yaml", "/api/v1/devices/import", "/login", "/console/x", "/health/live")) {
        Res r = send(port, "POST", path, multipart, mp);
        assertTrue(r.status() >= 300 && r.status() < 500, path + " answered " + r.status() + " to an anonymous multipart post");
      }
      assertEquals(415, send(port, "POST", "/login", multipart, mp).status(), "a login is a form, never multipart");
      Map<String, String> mpOperator = new LinkedHashMap<>(mp);
      mpOperator.put("Authorization", "Bearer " + TestEnv.API_TOKEN);
      assertEquals(415, send(port, "POST", "/api/v1/devices/import", multipart, mpOperator).status(), "not even the operator uploads files");
      String big = "{\"ids\":[" + "1,".repeat(5000) + "1]}";
      assertEquals(413, send(port, "POST", "/api/v1/dead-letters/discard", big, bearer(TestEnv.API_TOKEN)).status(), "over http.body.max.bytes");
      Res tooBigImport = send(port, "POST", "/api/v1/devices/import", "[" + "{\"device_id\":\"x\"},".repeat(5000) + "{}]", bearer(TestEnv.API_TOKEN));
      assertEquals(413, tooBigImport.status(), tooBigImport.body());
      assertTrue(tooBigImport.json().getString("error").contains("http.import.max.bytes"), tooBigImport.body());
      assertEquals(413, send(port, "POST", "/login", "username=a&password=" + "p".repeat(20_000), Map.of("Content-Type", FORM)).status());
      assertEquals(401, send(port, "POST", "/api/v1/probe/inventory", "x".repeat(300_000), Map.of("Content-Type", JSON)).status(),
          "an anonymous big body is refused before it is read");
      assertFalse(Files.exists(uploads), "no file-uploads directory");
      try (var files = Files.walk(env.dataDir)) {
        assertEquals(List.of(env.dataDir), files.collect(Collectors.toList()), "nothing written to the data directory");
      }

      // 2. sessions: 150 anonymous requests (probe polls, health, the login page, the API, forged cookies) create none
      List<Res> anonymous = new ArrayList<>();
      for (int i = 0; i < 25; i++) {
        anonymous.add(send(port, "GET", "/api/v1/probe/pacing", null, Map.of("Authorization", "Bearer " + TestEnv.PROBE_TOKEN)));
        anonymous.add(send(port, "GET", "/api/v1/probe/inventory?group=default", null, Map.of()));
        anonymous.add(send(port, "GET", "/health/ready", null, Map.of()));
        anonymous.add(send(port, "GET", "/login", null, Map.of()));
        anonymous.add(send(port, "GET", "/api/v1/overview", null, Map.of("Cookie", "inspection_session=forged-" + i)));
        anonymous.add(send(port, "GET", "/console/", null, Map.of()));
      }
      assertEquals(150, anonymous.size());
      assertEquals(25, anonymous.stream().filter(r -> r.status() == 200 && r.body().contains("factor")).count(), "the probe polls were answered");
      assertEquals(List.of(), anonymous.stream().flatMap(r -> r.cookies().stream()).toList(), "no Set-Cookie to anyone anonymous");
      assertEquals(0, node.http().consoleSessions(), "no session was created");

      // 3. the probes' inventory needs the group's token
      String inv = "/api/v1/probe/inventory?group=default&limit=10";
      assertEquals(401, send(port, "GET", inv, null, Map.of()).status());
      assertEquals(401, send(port, "GET", inv, null, Map.of("Authorization", "Bearer not-a-token-at-all-0000")).status());
      Res otherGroup = send(port, "GET", inv, null, Map.of("Authorization", "Bearer " + TestEnv.PROBE_EAST_TOKEN));
      assertEquals(403, otherGroup.status(), "east's token does not read default's devices");
      assertEquals(200, send(port, "GET", "/api/v1/probe/inventory?group=east", null, Map.of("Authorization", "Bearer " + TestEnv.PROBE_EAST_TOKEN)).status());
      assertEquals(200, send(port, "GET", inv, null, Map.of("Authorization", "Bearer " + TestEnv.PROBE_TOKEN)).status());
      assertEquals(403, send(port, "GET", "/api/v1/overview", null, Map.of("Authorization", "Bearer " + TestEnv.PROBE_TOKEN)).status(),
          "a probe token reads nothing else");

      // 4. roles: the read-only token and console login read, and every mutation refuses them
      assertEquals(200, send(port, "GET", "/api/v1/overview", null, bearer(TestEnv.READ_TOKEN)).status());
      String viewer = sessionOf(login(port, TestEnv.READONLY_USER, TestEnv.READONLY_PASSWORD, Map.of("Origin", origin)));
      assertEquals(1, node.http().consoleSessions());
      for (String[] m : MUTATIONS) {
        Res byToken = send(port, m[0], m[1], m[2], bearer(TestEnv.READ_TOKEN));
        assertEquals(403, byToken.status(), m[0] + " " + m[1] + " by the read-only token: " + byToken.body());
        assertTrue(byToken.json().getString("error").contains("read-only"), byToken.body());
        Res bySession = send(port, m[0], m[1], m[2], Map.of("Cookie", viewer, "Origin", origin, "Content-Type", JSON));
        assertEquals(403, bySession.status(), m[0] + " " + m[1] + " by the read-only login: " + bySession.body());
      }
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_resource WHERE device_id = 'sec-2'"), "nothing was imported");

      // 5. cookie-authenticated mutations come from this origin with JSON; the operator's session may change
      String operator = sessionOf(login(port, TestEnv.CONSOLE_USER, TestEnv.CONSOLE_PASSWORD, Map.of("Origin", origin)));
      String replay = "/api/v1/dead-letters/discard";
      Res crossSite = send(port, "POST", replay, "{\"ids\":[1]}", Map.of("Cookie", operator, "Origin", "http://evil.example", "Content-Type", JSON));
      assertEquals(403, crossSite.status(), crossSite.body());
      assertEquals(403, send(port, "POST", replay, "{\"ids\":[1]}", Map.of("Cookie", operator, "Referer", "http://evil.example/x",
          "Content-Type", JSON)).status());
      assertEquals(415, send(port, "POST", replay, "{\"ids\":[1]}", Map.of("Cookie", operator, "Origin", origin, "Content-Type", "text/plain")).status(),
          "a simple (form-like) request cannot change anything");
      assertEquals(200, send(port, "POST", replay, "{\"ids\":[1]}", Map.of("Cookie", operator, "Origin", origin, "Content-Type", JSON)).status());
      assertEquals(403, login(port, TestEnv.CONSOLE_USER, TestEnv.CONSOLE_PASSWORD, Map.of("Origin", "http://evil.example")).status(),
          "no login from another site's form");
      // the session cap: two live, a third login fits, a fourth is refused
      sessionOf(login(port, TestEnv.CONSOLE_USER, TestEnv.CONSOLE_PASSWORD, Map.of()));
      assertEquals(3, node.http().consoleSessions());
      Res full = login(port, TestEnv.CONSOLE_USER, TestEnv.CONSOLE_PASSWORD, Map.of());
      assertEquals(503, full.status(), full.body());
      assertTrue(full.json().getString("error").contains("console.session.idle.ms"), full.body());
      assertEquals(303, send(port, "POST", "/logout", null, Map.of("Cookie", viewer, "Origin", origin)).status());
      assertEquals(2, node.http().consoleSessions(), "a logout ends the session");
      assertEquals(302, send(port, "GET", "/console/", null, Map.of("Cookie", viewer)).status(), "the ended session opens nothing");

      // 6. the audit log: every mutation by the operator, with who, role, what, from where and how it ended
      for (String[] m : MUTATIONS) {
        Res r = send(port, m[0], m[1], m[2], bearer(TestEnv.API_TOKEN));
        assertTrue(r.status() < 500, m[0] + " " + m[1] + ": " + r.body());
      }
      try {
        awaitTrue(Duration.ofSeconds(10), "every operator mutation audited", () -> {
          JsonArray all = send(port, "GET", "/api/v1/audit?limit=1000", null, bearer(TestEnv.READ_TOKEN)).json().getJsonArray("entries");
          return MUTATIONS.stream().allMatch(m -> find(all, "api-token", template(m)) != null);
        });
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        throw new AssertionError("not every mutation audited: " + send(port, "GET", "/api/v1/audit?limit=1000", null, bearer(TestEnv.READ_TOKEN)).body(), e);
      }
      JsonArray entries = send(port, "GET", "/api/v1/audit?limit=1000", null, bearer(TestEnv.READ_TOKEN)).json().getJsonArray("entries");
      for (String[] m : MUTATIONS) {
        String action = template(m);
        JsonObject byOperator = find(entries, "api-token", action);
        assertNotNull(byOperator, "audited: " + action + " in " + entries.encodePrettily());
        assertEquals("operator", byOperator.getString("role"));
        assertEquals("127.0.0.1", byOperator.getString("remote"));
        assertNotNull(byOperator.getString("at"));
        JsonObject refused = find(entries, "api-read-token", action);
        assertNotNull(refused, "the read-only attempt is audited too: " + action);
        assertEquals(403, refused.getInteger("status"));
        assertEquals("refused", refused.getString("outcome"));
      }
      assertTrue(entries.stream().map(JsonObject.class::cast).anyMatch(e -> e.getString("action").equals("login")
          && e.getString("who").equals(TestEnv.READONLY_USER) && e.getString("role").equals("reader") && e.getString("outcome").equals("ok")), "logins are audited");
      JsonObject capped = find(entries, TestEnv.CONSOLE_USER, "login");
      assertEquals(503, capped.getInteger("status"), "the newest operator login was refused by the session cap");
      assertNotNull(find(entries, TestEnv.CONSOLE_USER, "POST /api/v1/dead-letters/discard"), "a session's mutation is audited under its user");
      assertTrue(entries.getJsonObject(0).getLong("id") > entries.getJsonObject(entries.size() - 1).getLong("id"), "newest first");
      JsonObject page = send(port, "GET", "/api/v1/audit?limit=2", null, bearer(TestEnv.API_TOKEN)).json();
      assertEquals(2, page.getJsonArray("entries").size());
      JsonObject next = send(port, "GET", "/api/v1/audit?limit=2&before=" + page.getLong("next_before"), null, bearer(TestEnv.API_TOKEN)).json();
      assertTrue(next.getJsonArray("entries").getJsonObject(0).getLong("id") < page.getLong("next_before"), "paged on");

      // 7. security headers on HTML, JSON, refusals and redirects
      for (Res r : List.of(send(port, "GET", "/login", null, Map.of()), send(port, "GET", "/console/", null, Map.of("Cookie", operator)),
          send(port, "GET", "/api/v1/overview", null, bearer(TestEnv.API_TOKEN)), send(port, "GET", "/api/v1/overview", null, Map.of()),
          send(port, "GET", "/health/live", null, Map.of()), send(port, "GET", "/nothing-here", null, Map.of()))) {
        assertEquals("DENY", r.header("X-Frame-Options"), r.raw().uri().toString());
        assertEquals("nosniff", r.header("X-Content-Type-Options"));
        assertEquals("same-origin", r.header("Referrer-Policy"), "same-origin: a browser still names this origin on its own posts");
        String csp = r.header("Content-Security-Policy");
        assertTrue(csp != null && csp.contains("frame-ancestors 'none'") && csp.contains("script-src 'self'") && !csp.contains("script-src 'self' 'unsafe"), csp);
        assertNotNull(r.header("X-Request-Id"));
      }

      // 8. replay all pages through the table: 250 pending letters, pages of 100, all replayed
      env.topology().declare(ch);
      env.execute("INSERT INTO $S.dead_letter (reason, routing_key, body) SELECT 'sec_test', '" + env.topology().routingKey(0, Priority.NORMAL)
          + "', convert_to('{\"n\":' || g || '}', 'UTF8') FROM generate_series(1, 250) g");
      Res job = send(port, "POST", "/api/v1/dead-letters/replay", "{}", bearer(TestEnv.API_TOKEN));
      assertEquals(202, job.status(), job.body());
      long jobId = job.json().getLong("job_id");
      awaitTrue(Duration.ofSeconds(30), "the replay is done",
          () -> send(port, "GET", "/api/v1/jobs/" + jobId, null, bearer(TestEnv.API_TOKEN)).json().getString("state").equals("DONE"));
      assertEquals(250, send(port, "GET", "/api/v1/jobs/" + jobId, null, bearer(TestEnv.API_TOKEN)).json().getLong("done"));
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.dead_letter WHERE reason = 'sec_test' AND state = 'PENDING'"));

      // 9. password guessing: slowed to 429 with Retry-After, and then even the right password waits
      int tries = 0;
      Res guess;
      do {
        guess = login(port, TestEnv.CONSOLE_USER, "guess-number-" + tries, Map.of());
        tries++;
      } while (guess.status() != 429 && tries < 20);
      assertEquals(429, guess.status(), "throttled after " + tries + " guesses");
      assertTrue(tries <= 6, "within the free failures and a few more: " + tries);
      assertTrue(Integer.parseInt(guess.header("Retry-After")) >= 1, guess.header("Retry-After"));
      Res right = login(port, TestEnv.CONSOLE_USER, TestEnv.CONSOLE_PASSWORD, Map.of());
      assertEquals(429, right.status(), "no password is checked while the user waits");
      awaitTrue(Duration.ofSeconds(10), "failed logins are audited", () -> find(send(port, "GET", "/api/v1/audit?limit=1000", null,
          bearer(TestEnv.API_TOKEN)).json().getJsonArray("entries"), TestEnv.CONSOLE_USER, "login failed") != null);

      // 10. a 500 answers a request id and nothing of the internals; the id is the one in the header
      env.execute("DROP TABLE $S.audit_log");
      Res broken = send(port, "GET", "/api/v1/audit", null, bearer(TestEnv.API_TOKEN));
      assertEquals(500, broken.status(), broken.body());
      assertEquals(broken.header("X-Request-Id"), broken.json().getString("request_id"));
      assertTrue(broken.json().getString("error").contains(broken.header("X-Request-Id")), broken.body());
      for (String internal : Set.of("audit_log", "relation", "Exception", env.name, "42P01")) {
        assertFalse(broken.body().contains(internal), "the answer names '" + internal + "': " + broken.body());
      }
    }
  }

  /** The route template a mutation is audited under. */
  private static String template(String[] m) {
    return m[0] + " " + m[1].replace("/nobody/", "/{id}/").replace("/sec-1/device.offline/", "/{device}/{key}/").replace("/devices/sec-1", "/devices/{id}");
  }

  private static JsonObject find(JsonArray entries, String who, String action) {
    for (int i = 0; i < entries.size(); i++) {
      JsonObject e = entries.getJsonObject(i);
      if (who.equals(e.getString("who")) && action.equals(e.getString("action"))) return e;
    }
    return null;
  }
}
