package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.node.Node;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Push ingestion on the probe (issue 13 item 2): {@code POST /ingest/v1/hotel_room} against a real probe, its
 * SQLite outbox, RabbitMQ and a worker writing PostgreSQL.
 */
class IngestIT {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  static JsonObject frame(String device, String room, long ts, String loopState) {
    return new JsonObject().put("frame", "0x36").put("hotel_id", 1085).put("room_id", room).put("device_id", device)
        .put("guid", device + "-" + ts).put("ts_ms", ts).put("sys_lock_status", 1)
        .put("device_list", new JsonArray().add(new JsonObject().put("dev_type", 1).put("dev_addr", 23).put("dev_loop", 12).put("state", loopState)))
        .put("fault_list", new JsonArray());
  }

  static HttpResponse<String> push(int port, String profile, String token, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/ingest/v1/" + profile)).timeout(Duration.ofSeconds(30))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
    if (token != null) b.header("Authorization", "Bearer " + token);
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @Test
  void aFrameAnsweredWith2xxIsDeliveredToTheDatabaseAlthoughTheProbeWasKilledRightAfter() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      String probeId = env.name + "-push";
      int port = freePort();
      JsonArray frames = new JsonArray();
      long ts = System.currentTimeMillis() - 60_000;
      for (int i = 0; i < 40; i++) frames.add(frame("rcu-" + (i % 4), "82" + (i % 2) + "1", ts + i, i % 3 == 0 ? "on" : "off"));
      JsonObject answer;
      long ackMs;
      try (ChildNode probe = ChildNode.start(env, "push-1", Map.of("role", "probe", "node.id", probeId, "http.port", Integer.toString(port)))) {
        long t0 = System.nanoTime();
        HttpResponse<String> r = push(port, "hotel_room", TestEnv.INGEST_TOKEN, frames.encode());
        ackMs = (System.nanoTime() - t0) / 1_000_000;
        probe.kill9(); // right after the 2xx: no graceful stop, no flush
        assertEquals(200, r.statusCode(), r.body());
        answer = new JsonObject(r.body());
      }
      System.out.println("IngestIT: 40 frames acknowledged durable in " + ackMs + " ms (one push, child probe)");
      assertEquals(40, answer.getInteger("taken"));
      Set<String> acked = new HashSet<>();
      for (Object o : answer.getJsonArray("results")) {
        JsonObject res = (JsonObject) o;
        assertEquals(200, res.getInteger("status"));
        assertTrue(res.getLong("seq") >= 1);
        acked.add(res.getString("message_id"));
      }
      assertEquals(40, acked.size());
      Set<String> inOutbox = env.produced(probeId).stream().map(Ledger.Produced::messageId).collect(Collectors.toSet());
      assertTrue(inOutbox.containsAll(acked), "every acknowledged frame is in the outbox after kill -9");
      // the seq given by the outbox (the row id): 10 frames each, growing in the order of the array
      List<Long> seqs = answer.getJsonArray("results").stream().map(o -> (JsonObject) o)
          .filter(o -> o.getString("device_id").equals("rcu-1")).map(o -> o.getLong("seq")).toList();
      assertEquals(10, seqs.size());
      for (int i = 1; i < seqs.size(); i++) assertTrue(seqs.get(i) > seqs.get(i - 1), "rcu-1's seqs grow in array order: " + seqs);

      env.start(Map.of("role", "worker", "node.id", env.name + "-w"));
      try (ChildNode replay = ChildNode.start(env, "push-2", Map.of("role", "probe", "node.id", probeId))) {
        env.awaitDelivered(probeId, Duration.ofSeconds(120));
      }
      Set<String> stored = env.query("SELECT message_id FROM $S.device_status_history WHERE device_id LIKE 'rcu-%'").stream()
          .map(r -> (String) r[0]).collect(Collectors.toSet());
      assertEquals(acked, stored, "each acknowledged frame once in history");
      Ledger.Report ledger = env.ledger(probeId);
      assertTrue(ledger.clean(), ledger.toString());
      // the hotel profile merged them (the inventory does not list rcu-*: the frames name their profile)
      JsonObject current = new JsonObject((String) env.query("SELECT status_payload::text FROM $S.device_status_current WHERE device_id = 'rcu-1'")
          .get(0)[0]);
      assertEquals(ts + 37, current.getLong("ts_ms"), "the newest frame of rcu-1 (index 37)");
      assertEquals("off", current.getJsonObject("dev_loops").getJsonObject("001023012").getString("state"));
      assertFalse(current.containsKey("device_list"), "stored as the profile's fields, not as the raw frame");
    }
  }

  @Test
  void theEndpointRefusesWhatItMustAndTakesTheValidFramesOfABatch() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      String probeId = env.name + "-edge";
      Node probe = env.start(Map.of("role", "probe", "node.id", probeId, "probe.ingest.max.bytes", "4096", "probe.ingest.rate.per.s", "12"));
      int port = probe.http().port();
      long ts = System.currentTimeMillis();

      // a malformed frame in a batch: 207, the field named, the others taken
      JsonObject noTime = frame("rcu-9", "8301", ts, "on");
      noTime.remove("ts_ms");
      JsonObject badLoop = frame("rcu-9", "8301", ts, "on");
      badLoop.getJsonArray("device_list").getJsonObject(0).put("dev_addr", "A1");
      HttpResponse<String> mixed = push(port, "hotel_room", TestEnv.INGEST_TOKEN,
          new JsonArray().add(frame("rcu-8", "8301", ts, "on")).add(noTime).add(badLoop).add(frame("rcu-8", "8301", ts + 1, "off")).encode());
      assertEquals(207, mixed.statusCode(), mixed.body());
      JsonArray results = new JsonObject(mixed.body()).getJsonArray("results");
      assertEquals(List.of(200, 400, 400, 200), results.stream().map(o -> ((JsonObject) o).getInteger("status")).toList());
      assertEquals("ts_ms", results.getJsonObject(1).getString("field"));
      assertEquals("device_list[0].dev_addr", results.getJsonObject(2).getString("field"));
      assertTrue(results.getJsonObject(3).getLong("seq") > results.getJsonObject(0).getLong("seq"), "a device's seq grows: " + results);
      awaitTrue(Duration.ofSeconds(10), "the two valid frames are in the outbox",
          () -> env.produced(probeId).stream().filter(p -> p.deviceId().equals("rcu-8")).count() == 2);
      assertEquals(0, env.produced(probeId).stream().filter(p -> p.deviceId().equals("rcu-9")).count(), "nothing of the refused ones");

      // one malformed frame alone: 400 naming the field
      HttpResponse<String> single = push(port, "hotel_room", TestEnv.INGEST_TOKEN, noTime.encode());
      assertEquals(400, single.statusCode());
      assertTrue(new JsonObject(single.body()).getString("error").startsWith("ts_ms: missing"), single.body());

      // credentials
      HttpResponse<String> none = push(port, "hotel_room", null, frame("rcu-7", "8301", ts, "on").encode());
      assertEquals(401, none.statusCode());
      assertNotNull(none.headers().firstValue("WWW-Authenticate").orElse(null));
      assertEquals(401, push(port, "hotel_room", TestEnv.PROBE_TOKEN, frame("rcu-7", "8301", ts, "on").encode()).statusCode(),
          "another credential is not a push token");
      assertEquals(401, push(port, "hotel_room", "x" + TestEnv.INGEST_TOKEN, frame("rcu-7", "8301", ts, "on").encode()).statusCode());

      // too large a body: 413, before anything is read
      JsonArray big = new JsonArray();
      for (int i = 0; i < 30; i++) big.add(frame("rcu-7", "8301", ts + i, "on"));
      assertTrue(big.encode().length() > 4096);
      assertEquals(413, push(port, "hotel_room", TestEnv.INGEST_TOKEN, big.encode()).statusCode());
      HttpResponse<String> form = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/ingest/v1/hotel_room"))
          .header("Authorization", "Bearer " + TestEnv.INGEST_TOKEN).header("Content-Type", "application/x-www-form-urlencoded")
          .POST(HttpRequest.BodyPublishers.ofString("a=" + "x".repeat(3000))).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(415, form.statusCode(), "a form body is never decoded");
      assertEquals(404, push(port, "no_such_profile", TestEnv.INGEST_TOKEN, frame("rcu-7", "8301", ts, "on").encode()).statusCode());

      // the rate: 12 frames a second; a push of 12 empties the bucket, so the next one soon after is refused whole
      JsonArray twelve = new JsonArray();
      for (int i = 0; i < 12; i++) twelve.add(frame("rcu-6", "8301", ts + i, "on"));
      HttpResponse<String> last = null;
      for (int i = 0; i < 3 && (last == null || last.statusCode() != 429); i++) last = push(port, "hotel_room", TestEnv.INGEST_TOKEN, twelve.encode());
      assertEquals(429, last.statusCode(), last.body());
      assertTrue(Long.parseLong(last.headers().firstValue("Retry-After").orElseThrow()) >= 1);
      assertEquals(0, env.produced(probeId).stream().filter(p -> p.deviceId().equals("rcu-7")).count(), "nothing refused was stored");
    }
  }

  @Test
  void aProbeWithoutPushTokensRefusesEveryPush() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      Node probe = env.start(Map.of("role", "probe", "node.id", env.name + "-closed", "probe.ingest.tokens", ""));
      HttpResponse<String> r = push(probe.http().port(), "hotel_room", TestEnv.INGEST_TOKEN, frame("rcu-1", "8201", 1, "on").encode());
      assertEquals(401, r.statusCode());
      assertTrue(r.body().contains("probe.ingest.tokens"), r.body());
    }
  }

  static HttpResponse<String> get(int port, String path) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer " + TestEnv.API_TOKEN).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void pushedRoomsAreReadThroughTheApiWithEveryDevicesMergedStatus() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      Node all = env.start(Map.of("role", "all", "node.id", env.name + "-all"));
      int port = all.http().port();
      long ts = System.currentTimeMillis() - 60_000;
      JsonObject lockFault = frame("rcu-b", "8201", ts + 5, "off").put("sys_lock_status", 0)
          .put("fault_list", new JsonArray().add(new JsonObject().put("dev_type", 7).put("dev_addr", 1).put("dev_loop", 0).put("error_type", 2)));
      JsonObject command = new JsonObject().put("frame", "0x0F").put("hotel_id", 1085).put("room_id", "8201").put("device_id", "rcu-a")
          .put("guid", "cmd-1").put("ts_ms", ts + 6).put("control_list", new JsonArray().add(new JsonObject().put("dev_type", 2).put("dev_addr", 5)
              .put("loop", 1).put("type_l", 1).put("type_h", 80)));
      JsonArray frames = new JsonArray().add(frame("rcu-a", "8201", ts + 1, "on")).add(lockFault).add(command)
          .add(frame("rcu-c", "8202", ts + 2, "on")).add(frame("rcu-z", "9901", ts, "on").put("hotel_id", "other"));
      assertEquals(200, push(port, "hotel_room", TestEnv.INGEST_TOKEN, frames.encode()).statusCode());
      // later, with a newer seq, a frame rcu-a stamped before its newest: it must not show
      HttpResponse<String> stale = push(port, "hotel_room", TestEnv.INGEST_TOKEN, frame("rcu-a", "8201", ts, "stale").encode());
      assertEquals(200, stale.statusCode(), stale.body());
      long staleSeq = new JsonObject(stale.body()).getLong("seq");
      awaitTrue(Duration.ofSeconds(60), "six frames in history", () -> env.queryLong("SELECT count(*) FROM $S.device_status_history") == 6);

      HttpResponse<String> rooms = get(port, "/api/v1/hotels/1085/rooms");
      assertEquals(200, rooms.statusCode(), rooms.body());
      JsonArray list = new JsonObject(rooms.body()).getJsonArray("rooms");
      assertEquals(List.of("8201", "8202"), list.stream().map(o -> ((JsonObject) o).getString("room_id")).toList());
      JsonObject r8201 = list.getJsonObject(0);
      assertEquals(2, r8201.getInteger("devices"));
      assertEquals(ts + 6, r8201.getLong("ts_ms"));
      assertEquals(1, r8201.getInteger("faults"));
      assertEquals(1, r8201.getInteger("devices_locked"), "rcu-a locked, rcu-b not");

      HttpResponse<String> room = get(port, "/api/v1/hotels/1085/rooms/8201");
      assertEquals(200, room.statusCode(), room.body());
      JsonArray devices = new JsonObject(room.body()).getJsonArray("devices");
      assertEquals(List.of("rcu-a", "rcu-b"), devices.stream().map(o -> ((JsonObject) o).getString("device_id")).toList());
      JsonObject a = devices.getJsonObject(0);
      assertEquals(ts + 6, a.getLong("ts_ms"));
      assertEquals("cmd-1", a.getString("guid"));
      assertEquals("on", a.getJsonObject("dev_loops").getJsonObject("001023012").getString("state"), "the stale frame did not roll it back");
      assertEquals(80, a.getJsonObject("dev_loops").getJsonObject("002005001").getInteger("type_h"), "the 0x0F command merged in");
      assertEquals(staleSeq, a.getLong("seq"), "the row moved to the stale frame's seq (rcu-a's newest) all the same");
      assertEquals(0, devices.getJsonObject(1).getInteger("sys_lock_status"));
      assertEquals(1, devices.getJsonObject(1).getJsonArray("faults").size());
      assertEquals(404, get(port, "/api/v1/hotels/1085/rooms/9901").statusCode(), "room 9901 belongs to hotel 'other'");
      assertEquals(1, new JsonObject(get(port, "/api/v1/hotels/other/rooms").body()).getJsonArray("rooms").size());
      assertEquals(1, env.queryLong("SELECT count(*) FROM pg_indexes WHERE schemaname = '$S' AND indexname = 'idx_dsc_hotel_room'"));
    }
  }
}
