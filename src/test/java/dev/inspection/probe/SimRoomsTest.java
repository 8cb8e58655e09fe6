package dev.inspection.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.state.PayloadProfiles;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SimRoomsTest {
  private static final long T0 = 1_780_000_000_000L;

  /** Fifty rounds 200 ms apart, then the settle pushes: every push in order, as the simulator sends them. */
  private static List<List<SimRooms.Frame>> run(SimRooms rooms) {
    List<List<SimRooms.Frame>> pushes = new ArrayList<>();
    for (int i = 0; i < 50; i++) pushes.add(rooms.round(T0 + 200L * i));
    pushes.addAll(rooms.settle(T0 + 200L * 50));
    return pushes;
  }

  private static JsonArray body(List<SimRooms.Frame> push) {
    JsonArray a = new JsonArray();
    push.forEach(f -> a.add(f.body()));
    return a;
  }

  @Test
  void theProbeTakesExactlyTheValidFramesOfEveryPushAndNamesTheFieldOfEachMalformedOne() {
    SimRooms rooms = new SimRooms(12, new Random(7));
    int malformed = 0;
    for (List<SimRooms.Frame> push : run(rooms)) {
      PushFrames.Read read = PushFrames.read(body(push).encode(), "hotel_room", Instant.ofEpochMilli(T0), 16, 1000);
      List<Integer> valid = new ArrayList<>();
      for (int i = 0; i < push.size(); i++) if (push.get(i).valid()) valid.add(i);
      assertEquals(valid, read.taken().stream().map(PushFrames.Taken::index).toList());
      for (PushFrames.Refused r : read.refused()) {
        assertTrue(Set.of("ts_ms", "device_list[0].dev_addr").contains(r.field()), r.error());
        malformed++;
      }
    }
    assertTrue(malformed > 0, "a run of 50 rounds has malformed frames");
  }

  @Test
  void aRunHasReorderedLateAndDuplicatedFrames() {
    SimRooms rooms = new SimRooms(12, new Random(11));
    Map<String, Long> newest = new HashMap<>();
    Set<String> guids = new HashSet<>();
    int older = 0;
    int duplicates = 0;
    for (List<SimRooms.Frame> push : run(rooms)) {
      for (SimRooms.Frame f : push) {
        if (!f.valid()) continue;
        long ts = f.body().getLong("ts_ms");
        if (ts < newest.getOrDefault(f.deviceId(), Long.MIN_VALUE)) older++;
        newest.merge(f.deviceId(), ts, Math::max);
        if (!guids.add(f.body().getString("guid"))) duplicates++;
      }
    }
    assertTrue(older > 10, "frames older than one of their device already sent: " + older);
    assertTrue(duplicates > 10, "frames sent twice: " + duplicates);
  }

  @Test
  void mergedInArrivalOrderWithTheDeviceTimeGuardEveryRoomEndsAtItsFinalReport() {
    SimRooms rooms = new SimRooms(12, new Random(3));
    Map<String, JsonObject> stored = new HashMap<>();
    Map<String, List<JsonObject>> byDevice = new HashMap<>();
    for (List<SimRooms.Frame> push : run(rooms)) {
      for (SimRooms.Frame f : push) {
        if (!f.valid()) continue;
        JsonObject update = PayloadProfiles.HOTEL_ROOM.normalize(f.body());
        stored.merge(f.deviceId(), update, PayloadProfiles.HOTEL_ROOM::merge);
        byDevice.computeIfAbsent(f.deviceId(), d -> new ArrayList<>()).add(update);
      }
    }
    for (String device : rooms.devices()) {
      JsonObject last = PayloadProfiles.HOTEL_ROOM.normalize(rooms.finalReport(device));
      assertEquals(last, stored.get(device), device + ": the worker's merge (arrival order, guarded)");
      // the frames say the truth: folded in device-time order they give the same
      List<JsonObject> inTime = new ArrayList<>(byDevice.get(device));
      inTime.sort(Comparator.comparingLong(j -> j.getLong("ts_ms")));
      assertEquals(last, PayloadProfiles.HOTEL_ROOM.fold(inTime), device + ": the fold in device time");
      assertEquals(6, last.getJsonObject("dev_loops").size(), "four lights, the AC, the curtain");
    }
  }

  @Test
  void roomsAreNumberedByFloor() {
    SimRooms rooms = new SimRooms(22, new Random(1));
    assertEquals("sim-rcu-101", rooms.devices().get(0));
    assertEquals("120", rooms.roomOf("sim-rcu-120"));
    assertEquals("sim-rcu-202", rooms.devices().get(21));
  }
}
