package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.node.Node;
import dev.inspection.probe.PushSimulator;
import dev.inspection.probe.SimRooms;
import dev.inspection.state.HotelRoomPayload;
import dev.inspection.state.PayloadProfiles;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The demo's simulators (issue 13 item 5) on a real node (probe, worker, scheduler; PostgreSQL, RabbitMQ, Redis): the
 * simulated hotel rooms push through the real ingest endpoint, and simulated devices flap.
 */
class PushSimIT {

  @Test
  void roomsPushedBySimulatedRcusShowTheirLastFrameByDeviceTimeThroughTheHotelApi() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      Node all = env.start(Map.of("role", "all", "node.id", env.name + "-sim", "probe.sim.push.rooms", "6", "probe.sim.push.interval.ms", "150"));
      PushSimulator sim = all.pushSim();
      int port = all.http().port();
      // long enough for every kind of disorder: malformed frames (refused alone), reordered, late and duplicated ones
      awaitTrue(Duration.ofSeconds(60), "the simulated rooms pushed frames, malformed ones among them",
          () -> sim.taken() >= 120 && sim.refused() >= 2);
      sim.settle().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
      assertEquals(0, sim.unexpected(), "the probe took every valid frame and refused every malformed one: " + sim.stats());

      // every taken frame (duplicates too: each has its own seq) is in history, the stale copies sent after the final reports included
      long taken = sim.taken();
      awaitTrue(Duration.ofSeconds(120), "all " + taken + " taken frames written",
          () -> env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id LIKE 'sim-rcu-%'") == taken);
      List<String> devices = sim.rooms().devices();
      for (String d : devices) {
        JsonObject shown = device(port, sim.rooms(), d);
        JsonObject last = PayloadProfiles.HOTEL_ROOM.normalize(sim.rooms().finalReport(d));
        assertEquals(last.getJsonObject(HotelRoomPayload.DEV_LOOPS), shown.getJsonObject("dev_loops"), d);
        assertEquals(last.getJsonArray(HotelRoomPayload.FAULTS), shown.getJsonArray("faults"), d);
        assertEquals(last.getInteger(HotelRoomPayload.SYS_LOCK_STATUS), shown.getInteger("sys_lock_status"), d);
        assertEquals(last.getLong(HotelRoomPayload.TS_MS), shown.getLong("ts_ms"), d);
        assertEquals(last.getString(HotelRoomPayload.GUID), shown.getString("guid"), d);
      }
      HttpResponse<String> rooms = IngestIT.get(port, "/api/v1/hotels/" + SimRooms.HOTEL + "/rooms");
      assertEquals(200, rooms.statusCode(), rooms.body());
      JsonArray list = new JsonObject(rooms.body()).getJsonArray("rooms");
      assertEquals(List.of("101", "102", "103", "104", "105", "106"), list.stream().map(o -> ((JsonObject) o).getString("room_id")).toList());
    }
  }

  private static JsonObject device(int port, SimRooms rooms, String device) {
    try {
      HttpResponse<String> r = IngestIT.get(port, "/api/v1/hotels/" + SimRooms.HOTEL + "/rooms/" + rooms.roomOf(device));
      if (r.statusCode() != 200) return null;
      for (Object o : new JsonObject(r.body()).getJsonArray("devices")) {
        if (((JsonObject) o).getString("device_id").equals(device)) return (JsonObject) o;
      }
      return null;
    } catch (Exception e) {
      return null;
    }
  }

  @Test
  void aFlappingSimulatedDeviceRaisesAFlappingAlertAndTheOthersDoNot() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      // 5 devices, 20 % flapping: sim-000005; fail rate 0 so the others never change
      env.start(Map.of("role", "all", "node.id", env.name + "-flap", "probe.sim.devices", "5", "probe.sim.flap.pct", "20",
          "probe.sim.fail.rate", "0", "probe.interval.ms", "200", "probe.jitter.pct", "0"));
      awaitTrue(Duration.ofSeconds(90), "sim-000005 raised device.flapping",
          () -> env.queryLong("SELECT count(*) FROM $S.alert_event WHERE device_id = 'sim-000005' AND alert_key = 'device.flapping' AND event_type = 'FIRING'") >= 1);
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.alert_event WHERE device_id <> 'sim-000005' AND alert_key = 'device.flapping'"));
      awaitTrue(Duration.ofSeconds(90), "and resolved it once it stayed up",
          () -> env.queryLong("SELECT count(*) FROM $S.alert_event WHERE device_id = 'sim-000005' AND alert_key = 'device.flapping' AND event_type = 'RESOLVED'") >= 1);
    }
  }
}
