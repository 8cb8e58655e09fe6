package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.inspection.node.Node;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 13: check specs that cannot hurt the probe. Bad specs are refused on import and PATCH naming the field; a
 * target written as a denied address is refused there too; a host name that resolves to a denied address is refused by
 * the probe before it connects; an http check reads a bounded body; one device the probe cannot run in a pulled
 * inventory leaves the others inspected.
 *
 * <p>The test targets listen on 127.0.0.2 (all of 127/8 is loopback on Linux) so the probe can deny 127.0.0.1, which
 * {@code localhost} resolves to.
 */
class CheckSpecIT {
  private final HttpClient http = HttpClient.newHttpClient();

  private HttpResponse<String> send(int port, String method, String path, String body) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).header("Authorization", "Bearer " + TestEnv.API_TOKEN)
        .method(method, HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String device(String id, String type, JsonObject spec) {
    return new JsonObject().put("device_id", id).put("check_type", type).put("check_spec", spec).put("interval_ms", 300).encode();
  }

  @Test
  void badSpecsAreRefusedNamingTheFieldAndTheProbeNeverConnectsToADeniedAddress() throws Exception {
    InetAddress alt = InetAddress.getByName("127.0.0.2");
    HttpServer big = HttpServer.create(new InetSocketAddress(alt, 0), 0);
    big.createContext("/big", ex -> {
      ex.sendResponseHeaders(200, 0); // chunked: 1 MiB the check must not read to the end
      try (OutputStream out = ex.getResponseBody()) {
        byte[] kb = new byte[1024];
        for (int i = 0; i < 1024; i++) out.write(kb);
      } catch (java.io.IOException closedByTheProbe) {
        // expected: the probe stops reading
      }
    });
    big.start();
    try (TestEnv env = new TestEnv(2); ServerSocket open = new ServerSocket(0, 50, alt); ServerSocket local = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
      Node sched = env.start(Map.of("role", "scheduler", "node.id", env.name + "-s"));
      int port = sched.httpPort();
      String body = String.join("\n",
          device("tcp-ok", "tcp", new JsonObject().put("host", "127.0.0.2").put("port", open.getLocalPort())),
          device("http-big", "http", new JsonObject().put("url", "http://127.0.0.2:" + big.getAddress().getPort() + "/big")),
          device("by-name", "tcp", new JsonObject().put("host", "localhost").put("port", local.getLocalPort())),
          device("bad-port", "tcp", new JsonObject().put("host", "10.1.2.3").put("port", 70_000)),
          device("bad-url", "http", new JsonObject().put("url", "ftp://10.1.2.3/x")),
          device("bad-field", "tcp", new JsonObject().put("host", "10.1.2.3").put("port", 22).put("timeout", 5)),
          device("metadata", "http", new JsonObject().put("url", "http://169.254.169.254/latest/meta-data/")));
      HttpResponse<String> imp = send(port, "POST", "/api/v1/devices/import", body);
      assertEquals(207, imp.statusCode(), imp.body());
      JsonObject res = new JsonObject(imp.body());
      assertEquals(3, res.getInteger("imported"), imp.body());
      Map<Integer, String> errors = new HashMap<>();
      for (Object o : res.getJsonArray("rejected")) errors.put(((JsonObject) o).getInteger("index"), ((JsonObject) o).getString("error"));
      assertTrue(errors.get(3).contains("check_spec.port"), errors.get(3));
      assertTrue(errors.get(4).contains("check_spec.url"), errors.get(4));
      assertTrue(errors.get(5).contains("check_spec.timeout is not a field"), errors.get(5));
      assertTrue(errors.get(6).contains("169.254.0.0/16"), errors.get(6));

      HttpResponse<String> patch = send(port, "PATCH", "/api/v1/devices/tcp-ok", new JsonObject().put("check_spec", new JsonObject().put("host", "127.0.0.2")).encode());
      assertEquals(400, patch.statusCode(), patch.body());
      assertTrue(patch.body().contains("check_spec.port"), patch.body());
      patch = send(port, "PATCH", "/api/v1/devices/tcp-ok", new JsonObject().put("check_spec", new JsonObject().put("host", "169.254.169.254").put("port", 80)).encode());
      assertEquals(400, patch.statusCode(), patch.body());
      assertTrue(patch.body().contains("denied range"), patch.body());

      // a device the probe cannot run, written past the API (an older version, a hand edit): the pull leaves it out
      env.execute("INSERT INTO $S.device_resource (device_id, check_type, check_spec, interval_ms, resource_version)"
          + " VALUES ('hand-edited', 'tcp', '{\"host\": \"127.0.0.2\", \"port\": \"twenty-two\"}', 300, nextval('$S.resource_version_seq'))");

      env.start(Map.of("role", "worker", "node.id", env.name + "-w"));
      Node probe = env.start(Map.of("role", "probe", "node.id", env.name + "-p", "probe.inventory.url", "http://127.0.0.1:" + port,
          "probe.target.deny", "127.0.0.1/32,::1/128", "probe.http.max.body.bytes", "4096"));
      awaitTrue(Duration.ofSeconds(60), "the three valid devices have a status",
          () -> env.queryLong("SELECT count(*) FROM $S.device_status_current") == 3);
      Map<String, JsonObject> status = new HashMap<>();
      for (Object[] r : env.query("SELECT device_id, status_payload::text FROM $S.device_status_current")) status.put((String) r[0], new JsonObject((String) r[1]));
      assertEquals("UP", status.get("tcp-ok").getString("status"), status.toString());
      assertEquals("UP", status.get("http-big").getString("status"), status.toString());
      assertEquals(4096, status.get("http-big").getInteger("body_truncated_at"), "read 4 KiB of the 1 MiB body, then closed");
      assertEquals("DOWN", status.get("by-name").getString("status"));
      assertTrue(status.get("by-name").getString("error").contains("denied range"), status.get("by-name").toString());
      assertTrue(probe.metrics().registry().counter("probe_inventory_refused_total").count() >= 1, "the hand-edited device was left out (each pull)");
      assertEquals(List.of(), env.query("SELECT device_id FROM $S.device_status_current WHERE device_id = 'hand-edited'"));
    } finally {
      big.stop(0);
    }
  }
}
