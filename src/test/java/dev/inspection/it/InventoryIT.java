package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.inventory.Inventory;
import dev.inspection.node.Node;
import dev.inspection.store.Db;
import dev.inspection.store.Migrations;
import dev.inspection.store.PgOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Inventory through the scheduler's API, real tcp/http checks, health and metrics, and start-up migrations. */
class InventoryIT {
  private final HttpClient http = HttpClient.newHttpClient();

  private HttpResponse<String> post(int port, String path, String body) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).header("Authorization", "Bearer " + TestEnv.API_TOKEN).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(int port, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).header("Authorization", "Bearer " + TestEnv.API_TOKEN).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void devicesImportedThroughTheApiAreInspectedByAProbeThatPullsTheInventory() throws Exception {
    try (TestEnv env = new TestEnv(2); ServerSocket open = new ServerSocket(0)) {
      Node sched = env.start(Map.of("role", "scheduler", "node.id", env.name + "-s"));
      int port = sched.httpPort();
      String body = String.join("\n",
          new JsonObject().put("device_id", "tcp-up").put("check_type", "tcp").put("check_spec", new JsonObject().put("host", "127.0.0.1").put("port", open.getLocalPort())).put("interval_ms", 300).put("priority", 1).encode(),
          new JsonObject().put("device_id", "tcp-down").put("check_type", "tcp").put("check_spec", new JsonObject().put("host", "127.0.0.1").put("port", 1)).put("interval_ms", 300).encode(),
          new JsonObject().put("device_id", "http-up").put("check_type", "http").put("check_spec", new JsonObject().put("url", "http://127.0.0.1:" + port + "/health/live")).put("interval_ms", 300).encode(),
          new JsonObject().put("device_id", "http-404").put("check_type", "http").put("check_spec", new JsonObject().put("url", "http://127.0.0.1:" + port + "/nothing")).put("interval_ms", 300).encode(),
          // real ICMP echo: the probe's child JVM runs as root here (raw socket), see IcmpCheckIT
          new JsonObject().put("device_id", "icmp-up").put("check_type", "icmp").put("check_spec", new JsonObject().put("host", "127.0.0.1").put("count", 2).put("interval_ms", 20)).put("interval_ms", 300).encode(),
          "{\"device_id\":\"bad\",\"check_type\":\"ping\"}",
          "not json at all");
      HttpResponse<String> imp = post(port, "/api/v1/devices/import", body);
      assertEquals(207, imp.statusCode(), imp.body());
      JsonObject res = new JsonObject(imp.body());
      assertEquals(5, res.getInteger("imported"));
      assertEquals(2, res.getJsonArray("rejected").size());
      assertTrue(res.getJsonArray("rejected").getJsonObject(0).getString("error").contains("check_type"), imp.body());

      HttpResponse<String> page = get(port, "/api/v1/probe/inventory?group=default&limit=3");
      JsonObject p = new JsonObject(page.body());
      assertEquals(3, p.getJsonArray("devices").size());
      assertEquals(400, get(port, "/api/v1/probe/inventory").statusCode());
      assertEquals(400, post(port, "/api/v1/devices/import", "").statusCode());

      Node worker = env.start(Map.of("role", "worker", "node.id", env.name + "-w"));
      Node probe = env.start(Map.of("role", "probe", "node.id", env.name + "-p", "probe.inventory.url", "http://127.0.0.1:" + port));
      awaitTrue(Duration.ofSeconds(60), "all five devices have a status", () -> env.queryLong("SELECT count(*) FROM $S.device_status_current") == 5);
      Map<String, String> status = new HashMap<>();
      for (Object[] r : env.query("SELECT device_id, status_payload->>'status' FROM $S.device_status_current")) status.put((String) r[0], (String) r[1]);
      assertEquals(Map.of("tcp-up", "UP", "tcp-down", "DOWN", "http-up", "UP", "http-404", "DOWN", "icmp-up", "UP"), status);
      assertEquals(1, env.queryLong("SELECT count(*) FROM $S.device_status_current WHERE device_id = 'icmp-up' AND status_payload->>'check' = 'icmp'"
          + " AND (status_payload->>'loss_pct')::float = 0 AND (status_payload->>'received')::int = 2 AND (status_payload->>'latency_ms')::float >= 0"));
      assertTrue(env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id = 'tcp-up' AND status_payload->>'check' = 'tcp'") > 0);

      JsonObject detail = new JsonObject(get(port, "/api/v1/devices/tcp-up").body());
      assertEquals("UP", detail.getJsonObject("current").getJsonObject("status").getString("status"));
      assertTrue(detail.getJsonArray("history").size() >= 1);
      HttpResponse<String> unknown = get(port, "/api/v1/devices/nope");
      assertEquals(404, unknown.statusCode());
      assertTrue(new JsonObject(unknown.body()).getString("error").contains("import"), unknown.body());

      assertEquals(200, get(port, "/health/live").statusCode());
      assertEquals(200, get(port, "/health/ready").statusCode());
      String workerMetrics = get(worker.httpPort(), "/metrics").body();
      assertTrue(workerMetrics.lines().anyMatch(l -> l.startsWith("worker_committed_total{") && l.contains("slot=")) && workerMetrics.contains("worker_batch_size_count"),
          workerMetrics);
      String probeMetrics = get(probe.httpPort(), "/metrics").body();
      assertTrue(probeMetrics.contains("outbox_depth") && probeMetrics.contains("outbox_confirms_total"), probeMetrics);
      assertEquals(200, get(probe.httpPort(), "/health/ready").statusCode());
      JsonArray slots = new JsonObject(get(port, "/api/v1/slots").body()).getJsonArray("slots");
      assertEquals(2, slots.size());
      assertEquals(env.name + "-w", slots.getJsonObject(0).getString("owner"));
    }
  }

  @Test
  void migrationsAreAppliedOnceWhenSeveralNodesStartAtOnce() throws Exception {
    try (TestEnv env = new TestEnv(8)) {
      Vertx vertx = Vertx.vertx();
      try {
        List<Pool> pools = new ArrayList<>();
        List<Future<Integer>> runs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
          Pool pool = Db.pool(vertx, PgOptions.from(env.config(Map.of())), 1);
          pools.add(pool);
          runs.add(Migrations.apply(vertx, pool, PgOptions.from(env.config(Map.of())), 8, true));
        }
        Future.all(runs).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        int applied = runs.stream().mapToInt(Future::result).sum();
        assertEquals(Migrations.FILES.size(), applied, "each migration applied by exactly one node");
        assertEquals(8, env.queryLong("SELECT count(*) FROM $S.slot_lease"));
        assertEquals(Migrations.FILES.size(), env.queryLong("SELECT count(*) FROM $S.flyway_schema_history WHERE success AND version IS NOT NULL"));
        pools.forEach(Pool::close);
      } finally {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      }
    }
  }
}
