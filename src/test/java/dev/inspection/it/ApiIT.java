package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.SlotHash;
import dev.inspection.messaging.Topology;
import dev.inspection.node.Node;
import dev.inspection.store.Migrations;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Every API route on a real cluster (leader, follower, worker, probe): success, validation errors, 401
 * without credentials, 409 with a pointer to the leader on a follower; and the OpenAPI text against the
 * routes the server really has.
 */
class ApiIT {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private record Res(int status, String body) {
    JsonObject json() {
      return new JsonObject(body);
    }
  }

  private static Res call(int port, String method, String path, String body, boolean auth) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(20))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (auth) b.header("Authorization", "Bearer " + TestEnv.API_TOKEN);
    HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    return new Res(r.statusCode(), r.body());
  }

  private static Res get(int port, String path) throws Exception {
    return call(port, "GET", path, null, true);
  }

  private static Res post(int port, String path, String body) throws Exception {
    return call(port, "POST", path, body, true);
  }

  @Test
  void everyRouteAnswersAndRefusesWhatItShould() throws Exception {
    try (TestEnv env = new TestEnv(4); Channel ch = env.channel()) {
      String w1 = env.name + "-w1";
      String w2 = env.name + "-w2";
      env.start(Map.of("role", "worker", "node.id", w1));
      env.start(Map.of("role", "worker", "node.id", w2));
      Node follower = env.start(Map.of("role", "scheduler", "node.id", env.name + "-follower"));
      String probeId = env.name + "-probe";
      env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "100", "probe.interval.ms", "500"));
      env.awaitSettled(Set.of(w1, w2), Duration.ofSeconds(30));
      int port = env.scheduler().httpPort();
      int fport = follower.httpPort();

      // credentials: every route but the OpenAPI text needs them (the probes' ones a probe token: SecurityHttpIT)
      for (String path : List.of("/api/v1/overview", "/api/v1/workers", "/api/v1/slots", "/api/v1/alerts", "/api/v1/dead-letters",
          "/api/v1/devices?q=sim", "/api/v1/versions", "/api/v1/probes")) {
        Res r = call(port, "GET", path, null, false);
        assertEquals(401, r.status(), path);
        assertTrue(r.json().getString("error").contains("Authorization: Bearer"), "the refusal says what to send: " + r.body());
      }
      assertEquals(401, call(port, "POST", "/api/v1/workers/" + w1 + "/drain", null, false).status());
      HttpResponse<String> wrong = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/workers"))
          .header("Authorization", "Bearer not-the-token").build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(401, wrong.statusCode());
      assertEquals(401, call(port, "GET", "/api/v1/probe/pacing", null, false).status());
      assertEquals(200, call(port, "GET", "/api/v1/probe/pacing", null, true).status());
      assertEquals(200, call(port, "GET", "/api/v1/openapi.yaml", null, false).status());

      // reads
      awaitTrue(Duration.ofSeconds(20), "results flowing", () -> get(port, "/api/v1/overview").json().getDouble("results_per_s") > 0);
      JsonObject overview = get(port, "/api/v1/overview").json();
      assertEquals(4, overview.getLong("slots_total"));
      assertEquals(2, overview.getLong("workers_active"));
      JsonObject versions = get(port, "/api/v1/versions").json();
      // every migration of the code, in order (V001, V002, ...): derived from the list, so a new one needs no edit here
      assertEquals(String.join(",", Migrations.FILES.stream().map(f -> f.substring(0, f.indexOf("__"))).toList()), versions.getString("schema_migrations"));
      assertTrue(versions.getString("schema_migrations").startsWith("V001,V002,V003,"), versions.getString("schema_migrations"));
      assertEquals(2, versions.getInteger("envelope_schema"));
      assertEquals(2, get(port, "/api/v1/workers").json().getJsonArray("workers").stream()
          .filter(o -> ((JsonObject) o).getString("state").equals("ACTIVE")).count());
      assertEquals(404, get(port, "/api/v1/workers/nobody").status());
      JsonArray slots = get(port, "/api/v1/slots").json().getJsonArray("slots");
      assertEquals(4, slots.size());
      awaitTrue(Duration.ofSeconds(20), "queue depths sampled", () -> get(port, "/api/v1/slots").json().getJsonArray("slots").getJsonObject(0)
          .getLong("backlog") >= 0);
      assertFalse(get(port, "/api/v1/slots/0/history").json().getJsonArray("history").isEmpty());
      assertEquals(404, get(port, "/api/v1/slots/99/history").status());
      assertEquals(400, get(port, "/api/v1/slots/x/history").status());
      JsonArray found = get(port, "/api/v1/devices?q=sim-0000").json().getJsonArray("devices");
      assertFalse(found.isEmpty(), "sim devices are searchable");
      String device = found.getJsonObject(0).getString("device_id");
      assertEquals(200, get(port, "/api/v1/devices/" + device).status());
      assertEquals(404, get(port, "/api/v1/devices/no-such-device").status());
      awaitTrue(Duration.ofSeconds(20), "a few results of the device", () -> get(port, "/api/v1/devices/" + device + "?history=2").json()
          .getJsonArray("history").size() == 2);
      assertEquals(400, get(port, "/api/v1/devices/" + device + "?history=0").status());
      assertEquals(200, get(port, "/api/v1/devices/" + device + "/rollups").status());
      assertEquals(400, get(port, "/api/v1/devices/" + device + "/rollups?from=2026-13-01").status());
      assertEquals(200, get(port, "/api/v1/devices/" + device + "/alerts").status());
      Res badLimit = get(port, "/api/v1/devices?limit=0");
      assertEquals(400, badLimit.status());
      assertTrue(badLimit.json().getString("error").startsWith("query parameter 'limit' is invalid"), "the contract names it: " + badLimit.body());
      awaitTrue(Duration.ofSeconds(20), "the probe reported", () -> get(port, "/api/v1/probes").json().getJsonArray("probes").stream()
          .anyMatch(o -> ((JsonObject) o).getString("probe_id").equals(probeId)));
      assertEquals(200, get(port, "/api/v1/alerts?state=all").status());
      assertEquals(400, get(port, "/api/v1/alerts?min_severity=9").status());
      assertEquals(200, get(fport, "/api/v1/workers").status(), "followers serve reads");

      // inventory: import (sync and async with progress), bad JSON, update, unknown device
      String body = new JsonArray().add(new JsonObject().put("device_id", "api-dev-1").put("check_type", "sim").put("interval_ms", 10_000))
          .add(new JsonObject().put("device_id", "api-dev-2").put("check_type", "bogus")).encode();
      Res imported = post(port, "/api/v1/devices/import", body);
      assertEquals(207, imported.status(), imported.body());
      assertEquals(1, imported.json().getJsonArray("rejected").size());
      assertEquals(400, post(port, "/api/v1/devices/import", "[{not json").status());
      Res async = post(port, "/api/v1/devices/import?async=true", new JsonArray().add(new JsonObject().put("device_id", "api-dev-3")
          .put("check_type", "sim")).encode());
      assertEquals(202, async.status());
      long job = async.json().getLong("job_id");
      awaitTrue(Duration.ofSeconds(10), "import job done", () -> get(port, "/api/v1/jobs/" + job).json().getInteger("percent") == 100);
      assertEquals(404, get(port, "/api/v1/jobs/99999").status());
      Res patched = call(port, "PATCH", "/api/v1/devices/api-dev-1", "{\"priority\":1,\"payload_profile\":\"hotel_room\"}", true);
      assertEquals(200, patched.status(), patched.body());
      assertEquals(1, get(port, "/api/v1/devices/api-dev-1").json().getJsonObject("inventory").getInteger("priority"));
      assertEquals(400, call(port, "PATCH", "/api/v1/devices/api-dev-1", "{\"payload_profile\":\"nope\"}", true).status());
      assertEquals(400, call(port, "PATCH", "/api/v1/devices/api-dev-1", "{\"device_id\":\"x\"}", true).status());
      assertEquals(404, call(port, "PATCH", "/api/v1/devices/unknown-dev", "{\"priority\":2}", true).status());

      // mutations on a follower: 409 with the leader's address
      for (String[] m : List.of(new String[] {"POST", "/api/v1/workers/" + w1 + "/drain"}, new String[] {"POST", "/api/v1/devices/import"},
          new String[] {"POST", "/api/v1/dead-letters/replay"}, new String[] {"PATCH", "/api/v1/devices/api-dev-1"})) {
        Res r = call(fport, m[0], m[1], "[]".equals(m[1]) ? null : (m[1].endsWith("import") ? "[{\"device_id\":\"f\",\"check_type\":\"sim\"}]" : "{}"), true);
        assertEquals(409, r.status(), m[1] + ": " + r.body());
        assertEquals("http://127.0.0.1:" + port, r.json().getString("leader_url"), r.body());
      }

      // dead letters: a malformed message is kept with its reason, replayed with progress, discarded
      Topology t = env.topology();
      ch.confirmSelect();
      for (int i = 0; i < 3; i++) {
        ch.basicPublish(t.exchange(), t.routingKey(0, Priority.NORMAL), new AMQP.BasicProperties.Builder().deliveryMode(2).build(),
            ("{broken " + i).getBytes(StandardCharsets.UTF_8));
      }
      ch.waitForConfirmsOrDie(10_000);
      awaitTrue(Duration.ofSeconds(30), "three dead letters kept", () -> get(port, "/api/v1/dead-letters").json().getJsonArray("dead_letters").size() == 3);
      JsonArray letters = get(port, "/api/v1/dead-letters").json().getJsonArray("dead_letters");
      assertEquals("malformed_json", letters.getJsonObject(0).getString("reason"));
      Res badId = post(port, "/api/v1/dead-letters/replay", "{\"ids\":[\"x\"]}");
      assertEquals(400, badId.status());
      assertTrue(badId.json().getString("error").startsWith("body field 'ids.0' is invalid"), "the contract names it: " + badId.body());
      assertEquals(400, post(port, "/api/v1/dead-letters/discard", "{}").status());
      Res discarded = post(port, "/api/v1/dead-letters/discard", "{\"ids\":[" + letters.getJsonObject(0).getLong("id") + "]}");
      assertEquals(1, discarded.json().getInteger("discarded"));
      Res replay = post(port, "/api/v1/dead-letters/replay", "{}");
      assertEquals(202, replay.status(), replay.body());
      long rjob = replay.json().getLong("job_id");
      awaitTrue(Duration.ofSeconds(20), "replay done", () -> get(port, "/api/v1/jobs/" + rjob).json().getString("state").equals("DONE"));
      assertEquals(2, get(port, "/api/v1/jobs/" + rjob).json().getLong("total"));
      // still malformed: they come back as new dead letters, and the replayed ones are marked
      awaitTrue(Duration.ofSeconds(30), "replayed ones marked, new copies pending", () ->
          get(port, "/api/v1/dead-letters?state=REPLAYED").json().getJsonArray("dead_letters").size() == 2
              && get(port, "/api/v1/dead-letters?state=PENDING").json().getJsonArray("dead_letters").size() == 2);
      assertEquals(400, get(port, "/api/v1/dead-letters?state=maybe").status());

      // alerts: a failing device fires; acknowledge it; unknown alert 404
      List<Envelope> down = new ArrayList<>();
      long base = System.currentTimeMillis() - 60_000;
      for (int s = 1; s <= 3; s++) {
        down.add(new Envelope(Envelope.messageId("api", base + s, "api-down", s), "api-down",
            SlotHash.slotOf("api-down", 4), 1, 1, 1, "api", base + s, s, Instant.ofEpochMilli(base + s),
            Priority.HIGH, new JsonObject().put("status", "DOWN")));
      }
      for (var e : down) {
        ch.basicPublish(t.exchange(), t.routingKey(e.slotId(), e.priority()), new AMQP.BasicProperties.Builder().deliveryMode(2).build(), e.toBytes());
      }
      ch.waitForConfirmsOrDie(10_000);
      awaitTrue(Duration.ofSeconds(20), "alert active", () -> get(port, "/api/v1/alerts?device=api-down").json().getJsonArray("alerts").size() == 1);
      Res acked = post(port, "/api/v1/alerts/api-down/device.offline/ack", "{\"note\":\"on it\"}");
      assertEquals(200, acked.status(), acked.body());
      JsonObject alert = get(port, "/api/v1/alerts?device=api-down").json().getJsonArray("alerts").getJsonObject(0);
      assertEquals("api-token", alert.getString("acked_by"));
      assertEquals("on it", alert.getString("ack_note"));
      assertEquals(404, post(port, "/api/v1/alerts/api-down/no.such.alert/ack", null).status());

      // workers: quarantine one (illegal twice), drain the other... the last one standing takes every slot
      Res q = post(port, "/api/v1/workers/" + w1 + "/quarantine", null);
      assertEquals(202, q.status(), q.body());
      awaitTrue(Duration.ofSeconds(30), "w1 lost its slots", () -> !env.activeOwners().containsValue(w1));
      assertEquals(404, post(port, "/api/v1/workers/nobody/quarantine", null).status());
      env.awaitSettled(Set.of(w2), Duration.ofSeconds(30));
    }
  }

  /**
   * A request that waits on a locked table answers 503 and holds back none of the leader's work. With a table locked (an
   * operator's {@code VACUUM FULL}), the console's requests each took a connection of the scheduler's pool of four until none
   * was left, and the leader's rounds and the node's health check waited for one. They now run on the API's own three
   * connections and give up after {@code api.lock.timeout.ms} (3 s) with a 503 that says why; those that find no connection
   * free within the pool's 10 s answer 503 too (24 requests are 24 s of waiting on three connections: both kinds come). Twice:
   * device searches with {@code device_status_current} locked, the overview with {@code alert_current} locked (it counts
   * the active alerts). Each time the leader makes a new worker ACTIVE meanwhile.
   */
  @Test
  void aRequestWaitingOnALockedTableAnswers503AndTheLeaderGoesOn() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      Node sched = env.start(Map.of("role", "scheduler", "node.id", env.name + "-s"));
      int port = sched.httpPort();
      lockedTableAnswers503(env, port, "device_status_current", "/api/v1/devices?q=dev", env.name + "-w1");
      lockedTableAnswers503(env, port, "alert_current", "/api/v1/overview", env.name + "-w2");
    }
  }

  private static void lockedTableAnswers503(TestEnv env, int port, String table, String path, String worker) throws Exception {
    ExecutorService clients = Executors.newFixedThreadPool(24); // all at once, whatever the machine's cores
    try (TestEnv.Held lock = env.hold("LOCK TABLE $S." + table + " IN ACCESS EXCLUSIVE MODE")) {
      List<CompletableFuture<Res>> requests = new ArrayList<>();
      for (int i = 0; i < 24; i++) {
        requests.add(CompletableFuture.supplyAsync(() -> {
          try {
            return get(port, path);
          } catch (Exception e) {
            throw new CompletionException(e);
          }
        }, clients));
      }
      env.start(Map.of("role", "worker", "node.id", worker));
      awaitTrue(Duration.ofSeconds(30), "the leader makes a new worker ACTIVE while " + table + " is locked", () -> "ACTIVE".equals(env.workerState(worker)));
      int locked = 0;
      int busy = 0;
      for (CompletableFuture<Res> f : requests) {
        Res r = f.get(60, TimeUnit.SECONDS);
        assertEquals(503, r.status(), path + ": " + r.body());
        String error = r.json().getString("error");
        if (error.contains("locked by another session")) locked++;
        else if (error.contains("stayed busy for 10 s")) busy++;
      }
      assertEquals(24, locked + busy, "each 503 says why");
      assertTrue(locked >= 1 && busy >= 1, path + ": " + locked + " gave up on the lock, " + busy + " found no connection in time");
      Res ready = get(port, "/health/ready");
      assertEquals(200, ready.status(), "the scheduler's own database check still answers: " + ready.body());
    } finally {
      clients.shutdownNow();
    }
    assertEquals(200, get(port, path).status(), path + " answers once " + table + " is free");
  }

  @Test
  void theOpenApiDescriptionListsExactlyTheRoutesTheServerHas() throws Exception {
    try (TestEnv env = new TestEnv(1)) {
      Node sched = env.start(Map.of("role", "scheduler", "node.id", env.name + "-s"));
      String yaml = call(sched.httpPort(), "GET", "/api/v1/openapi.yaml", null, false).body();
      Set<String> documented = new TreeSet<>();
      String path = null;
      for (String line : yaml.split("\n")) {
        if (line.matches("^  /api/v1/\\S*:$")) path = line.trim().substring(0, line.trim().length() - 1);
        else if (path != null && line.matches("^    (get|post|patch|put|delete):$")) documented.add(line.trim().replace(":", "").toUpperCase() + " " + path);
        else if (!line.startsWith("  ")) path = null;
      }
      Set<String> served = sched.http().apiRoutes();
      assertEquals(served, documented, "openapi.yaml and the router must list the same routes");
      assertTrue(served.size() >= 24, served.toString());
    }
  }

  @Test
  void theConsoleNeedsALoginWithAnHttpOnlySameSiteCookie() throws Exception {
    try (TestEnv env = new TestEnv(1)) {
      Node sched = env.start(Map.of("role", "scheduler", "node.id", env.name + "-s"));
      int port = sched.httpPort();
      HttpClient noRedirect = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();
      HttpResponse<String> console = noRedirect.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/console/")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(302, console.statusCode());
      assertEquals("/login", console.headers().firstValue("Location").orElse(""));
      HttpResponse<String> bad = noRedirect.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/login"))
          .header("Content-Type", "application/x-www-form-urlencoded")
          .POST(HttpRequest.BodyPublishers.ofString("username=" + TestEnv.CONSOLE_USER + "&password=wrong-password-123")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals("/login?failed=1", bad.headers().firstValue("Location").orElse(""));
      HttpResponse<String> good = noRedirect.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/login"))
          .header("Content-Type", "application/x-www-form-urlencoded")
          .POST(HttpRequest.BodyPublishers.ofString("username=" + TestEnv.CONSOLE_USER + "&password=" + TestEnv.CONSOLE_PASSWORD)).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(303, good.statusCode());
      String cookie = good.headers().allValues("Set-Cookie").stream().filter(c -> c.startsWith("inspection_session=")).findFirst().orElseThrow();
      assertTrue(cookie.toLowerCase().contains("httponly"), cookie);
      assertTrue(cookie.contains("SameSite=Strict"), cookie);
      String session = cookie.substring(0, cookie.indexOf(';'));
      HttpResponse<String> api = noRedirect.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/workers"))
          .header("Cookie", session).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, api.statusCode(), "the console session reads the API");
      assertFalse(api.body().contains(TestEnv.API_TOKEN) || api.body().contains(TestEnv.CONSOLE_PASSWORD), "no secret in answers");
      HttpResponse<String> version = noRedirect.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/versions"))
          .header("Cookie", session).build(), HttpResponse.BodyHandlers.ofString());
      assertNotNull(new JsonObject(version.body()).getString("app_version"));
    }
  }

  @Test
  void theJarRefusesToStartItsApiWithAPlaceholderSecret() throws Exception {
    try (TestEnv env = new TestEnv(1)) {
      String jar = System.getProperty("node.jar", "target/node.jar");
      List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", jar,
          "--role=scheduler", "--node.id=" + env.name + "-s", "--http.port=0", "--pg.schema=" + env.name, "--api.token=changeme",
          "--console.password=" + TestEnv.CONSOLE_PASSWORD));
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "it exits at once");
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertEquals(2, p.exitValue(), out);
      assertTrue(out.contains("api.token is a placeholder") && out.contains("INSPECT_API_TOKEN"), out);
      assertFalse(out.contains(TestEnv.CONSOLE_PASSWORD), "no secret in its output");
    }
  }
}
