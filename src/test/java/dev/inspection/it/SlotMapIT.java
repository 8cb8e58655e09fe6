package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.config.ConfigException;
import dev.inspection.node.Node;
import io.vertx.core.json.JsonObject;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** D11 and INV-2 (issue 14 item 3): the slot map in the database is the truth; plan versions are real. */
class SlotMapIT {
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void theFirstStartSeedsTheMapAndANodeWithAnotherSlotsTotalRefusesToStartWithExitCode2() throws Exception {
    try (TestEnv env = new TestEnv(4)) {
      env.start(Map.of("role", "scheduler", "node.id", env.name + "-s"));
      assertEquals(List.of(List.of(1L, 4L)), rows(env.query("SELECT version, total_slots FROM $S.slot_map_version")));

      // in this JVM: the start fails with the configuration error
      ExecutionException e = assertThrows(ExecutionException.class, () -> new Node(env.config(Map.of("role", "worker", "slots.total", "8")),
          Clock.systemUTC()).start().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS));
      assertInstanceOf(ConfigException.class, e.getCause());

      // a real process: exit code 2 (configuration error: do not restart), both values named
      Map<String, String> flags = new HashMap<>(env.baseFlags());
      flags.put("slots.total", "8");
      flags.put("role", "worker");
      flags.put("node.id", env.name + "-w8");
      long t0 = System.nanoTime();
      Ran ran = runNode(flags);
      System.out.printf("mismatched slots.total: exit %d after %d ms%n", ran.code, (System.nanoTime() - t0) / 1_000_000);
      assertEquals(2, ran.code, ran.out);
      assertTrue(ran.out.contains("slots.total is 8") && ran.out.contains("has 4 slots"), ran.out);
      assertEquals(List.of(List.of(1L, 4L)), rows(env.query("SELECT version, total_slots FROM $S.slot_map_version")), "the map is unchanged");
      assertEquals(4, env.queryLong("SELECT count(*) FROM $S.slot_lease"), "no slot rows for the refused count");

      // a probe reads the map from the scheduler (it never reaches PostgreSQL) and refuses the same way
      int port = env.scheduler().httpPort();
      ExecutionException p = assertThrows(ExecutionException.class, () -> new Node(env.config(Map.of("role", "probe", "slots.total", "8",
          "node.id", env.name + "-p8", "probe.inventory.url", "http://127.0.0.1:" + port)), Clock.systemUTC())
          .start().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS));
      assertInstanceOf(ConfigException.class, p.getCause());
      assertTrue(p.getCause().getMessage().contains("slots.total is 8") && p.getCause().getMessage().contains("has 4 slots"), p.getCause().getMessage());
      env.start(Map.of("role", "probe", "node.id", env.name + "-p4", "probe.inventory.url", "http://127.0.0.1:" + port));

      // the agreeing node starts
      Node worker = env.start(Map.of("role", "worker", "node.id", env.name + "-w4"));
      assertTrue(worker.httpPort() > 0);
    }
  }

  @Test
  void importsAndPatchesBumpTheGroupsPlanVersionAndTheProbeStampsItOnEveryResult() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      Node sched = env.start(Map.of("role", "scheduler", "node.id", env.name + "-s"));
      int port = sched.httpPort();
      assertEquals(1L, planVersion(port, "default"), "a group never touched is at 1");
      String devices = "{\"device_id\":\"pv-1\",\"check_type\":\"sim\",\"interval_ms\":200}\n{\"device_id\":\"pv-2\",\"check_type\":\"sim\",\"interval_ms\":200}";
      assertEquals(200, call(port, "POST", "/api/v1/devices/import", devices).statusCode());
      assertEquals(2L, planVersion(port, "default"));
      assertEquals(200, call(port, "PATCH", "/api/v1/devices/pv-2", "{\"interval_ms\":300}").statusCode());
      assertEquals(3L, planVersion(port, "default"));
      assertEquals(1L, planVersion(port, "east"));
      assertEquals(200, call(port, "PATCH", "/api/v1/devices/pv-2", "{\"probe_group\":\"east\"}").statusCode());
      assertEquals(4L, planVersion(port, "default"), "the group a device leaves changes its plan");
      assertEquals(2L, planVersion(port, "east"));
      assertEquals(404, call(port, "PATCH", "/api/v1/devices/nope", "{\"interval_ms\":300}").statusCode());
      assertEquals(4L, planVersion(port, "default"), "an unknown device bumps nothing");

      env.start(Map.of("role", "worker", "node.id", env.name + "-w"));
      String probeId = env.name + "-p";
      env.start(Map.of("role", "probe", "node.id", probeId, "probe.inventory.url", "http://127.0.0.1:" + port, "probe.inventory.refresh.ms", "500"));
      awaitTrue(Duration.ofSeconds(60), "pv-1 is published with plan_version 4", () -> planVersionsInOutbox(env, probeId).contains(4L));
      assertEquals(200, call(port, "PATCH", "/api/v1/devices/pv-1", "{\"check_spec\":{\"fail_rate\":0}}").statusCode());
      assertEquals(List.of("object"), env.query("SELECT jsonb_typeof(check_spec) FROM $S.device_resource WHERE device_id = 'pv-1'").stream()
          .map(r -> (String) r[0]).toList(), "a patched check_spec stays a JSON object");
      awaitTrue(Duration.ofSeconds(60), "pv-1 is published with plan_version 5 after the PATCH", () -> planVersionsInOutbox(env, probeId).contains(5L));
      assertTrue(planVersionsInOutbox(env, probeId).stream().allMatch(v -> v == 4L || v == 5L), "no result stamped with the constant 1 of old");
      awaitTrue(Duration.ofSeconds(60), "results reach the database", () -> env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id = 'pv-1'") > 0);
    }
  }

  @Test
  void theLeaderSchedulesAReshardWithItsEffectiveTimeAndGraceWindowAndTheMapShowsItsCountdown() throws Exception {
    try (TestEnv env = new TestEnv(4)) {
      Node leader = env.start(Map.of("role", "scheduler", "node.id", env.name + "-s1", "reshard.effective.after.ms", "60000",
          "reshard.window.end.ms", "120000"));
      Node follower = env.start(Map.of("role", "scheduler", "node.id", env.name + "-s2"));
      int port = leader.httpPort();
      JsonObject before = new JsonObject(call(port, "GET", "/api/v1/slot-map", "").body());
      assertEquals(1L, before.getJsonObject("current").getLong("version"));
      assertEquals(4, before.getJsonObject("current").getInteger("slots"));
      assertEquals(null, before.getValue("change"));

      assertEquals(400, call(port, "POST", "/api/v1/slot-map", "{\"slots\": \"many\"}").statusCode());
      assertEquals(400, call(port, "POST", "/api/v1/slot-map", "{\"slots\": 0}").statusCode());
      assertEquals(409, call(port, "POST", "/api/v1/slot-map", "{\"slots\": 4}").statusCode(), "the count in force");
      HttpResponse<String> onFollower = call(follower.httpPort(), "POST", "/api/v1/slot-map", "{\"slots\": 8}");
      assertEquals(409, onFollower.statusCode(), onFollower.body());

      HttpResponse<String> scheduled = call(port, "POST", "/api/v1/slot-map", "{\"slots\": 8}");
      assertEquals(202, scheduled.statusCode(), scheduled.body());
      JsonObject change = new JsonObject(scheduled.body()).getJsonObject("change");
      assertEquals(2L, change.getLong("version"));
      assertEquals(8, change.getInteger("slots"));
      assertEquals(4, change.getInteger("from_slots"));
      assertEquals("PENDING", change.getString("state"));
      assertTrue(change.getLong("effective_in_ms") > 50_000 && change.getLong("effective_in_ms") <= 60_000, change.encode());
      assertTrue(change.getLong("window_ends_in_ms") > 110_000 && change.getLong("window_ends_in_ms") <= 120_000, change.encode());
      assertEquals(409, call(port, "POST", "/api/v1/slot-map", "{\"slots\": 16}").statusCode(), "one reshard at a time");
      JsonObject shown = new JsonObject(call(follower.httpPort(), "GET", "/api/v1/slot-map", "").body());
      assertEquals(1L, shown.getJsonObject("current").getLong("version"), "v1 stays in force until the effective time");
      assertEquals(2L, shown.getJsonObject("change").getLong("version"));
      assertEquals(List.of(List.of(1L, 4L), List.of(2L, 8L)), rows(env.query("SELECT version, total_slots FROM $S.slot_map_version ORDER BY version")));
      assertEquals(1L, env.queryLong("SELECT count(*) FROM $S.slot_map_version WHERE version = 2 AND term = (SELECT term FROM $S.scheduler_term)"));
      assertEquals(8L, env.queryLong("SELECT count(*) FROM $S.slot_lease"),
          "the new slots' lease rows exist before the effective time, so workers can open them while nothing is routed there");
      assertEquals(4L, env.queryLong("SELECT count(*) FROM $S.slot_lease WHERE slot_map_version = 2"));
      HttpResponse<String> shrink = call(port, "POST", "/api/v1/slot-map", "{\"slots\": 2}");
      assertEquals(409, shrink.statusCode(), "one at a time comes first: " + shrink.body());
    }
  }

  private long planVersion(int port, String group) throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/probe/inventory?group=" + group))
        .header("Authorization", "Bearer " + TestEnv.PROBE_TOKEN).GET().build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return new JsonObject(r.body()).getLong("plan_version");
  }

  private HttpResponse<String> call(int port, String method, String path, String body) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).header("Authorization", "Bearer " + TestEnv.API_TOKEN)
        .method(method, HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The plan_version of every envelope in the probe's outbox. */
  private static List<Long> planVersionsInOutbox(TestEnv env, String probeId) throws Exception {
    List<Long> out = new ArrayList<>();
    try (java.sql.Connection c = DriverManager.getConnection("jdbc:sqlite:" + env.dataDir.resolve("outbox-" + probeId + ".db"));
         Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT body FROM outbox")) {
      while (rs.next()) out.add(new JsonObject(new String(rs.getBytes(1), StandardCharsets.UTF_8)).getJsonObject("envelope").getLong("plan_version"));
    }
    return out;
  }

  private static List<List<Long>> rows(List<Object[]> rows) {
    List<List<Long>> out = new ArrayList<>();
    for (Object[] r : rows) out.add(List.of(((Number) r[0]).longValue(), ((Number) r[1]).longValue()));
    return out;
  }

  private record Ran(int code, String out) {}

  private static Ran runNode(Map<String, String> flags) throws Exception {
    String jar = System.getProperty("node.jar", "target/node.jar");
    if (!new File(jar).exists()) throw new IllegalStateException(jar + " is missing: run `mvn package`");
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m", "-jar", jar));
    flags.forEach((k, v) -> cmd.add("--" + k + "=" + v));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException(cmd + " did not exit");
    }
    return new Ran(p.exitValue(), new String(out, StandardCharsets.UTF_8));
  }
}
