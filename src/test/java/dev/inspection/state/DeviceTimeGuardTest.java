package dev.inspection.state;

import static dev.inspection.state.PayloadProfiles.HOTEL_ROOM;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Seed 004's {@code WHERE EXCLUDED.ts_ms >= stored.ts_ms} in the in-memory merge and fold (issue 13 item 3). */
class DeviceTimeGuardTest {
  private static JsonObject frame(String json) {
    return HotelRoomPayload.normalize(new JsonObject(json));
  }

  static final JsonObject NEWER = frame("""
      {"frame":"0x36","ts_ms":2000,"sys_lock_status":1,"device_list":[{"dev_type":1,"dev_addr":23,"dev_loop":12,"state":"on"}],
       "fault_list":[]}""");
  static final JsonObject OLDER = frame("""
      {"frame":"0x36","ts_ms":1000,"sys_lock_status":0,"device_list":[{"dev_type":1,"dev_addr":23,"dev_loop":12,"state":"off"},
       {"dev_type":9,"dev_addr":9,"dev_loop":9,"state":"stale"}],"fault_list":[{"dev_type":1,"error_type":2}]}""");

  @Test
  void anOlderFrameThatArrivesLaterChangesNoFieldOfTheMergedState() {
    // NEWER came first (lower probe seq), OLDER after it (higher seq): without the guard ts_ms stays 2000 by MAX
    // while dev_loops and sys_lock_status go back to 1000's values
    JsonObject state = HOTEL_ROOM.fold(List.of(NEWER, OLDER));
    assertEquals(NEWER, state);
    assertEquals(1, state.getInteger("sys_lock_status"));
    assertEquals("on", state.getJsonObject("dev_loops").getJsonObject("001023012").getString("state"));
    assertFalse(state.getJsonObject("dev_loops").containsKey("009009009"));
    assertEquals(NEWER, HOTEL_ROOM.merge(NEWER, OLDER));
  }

  @Test
  void aFrameWithTheSameDeviceTimeIsTakenAsInTheSeed() {
    JsonObject same = OLDER.copy().put("ts_ms", 2000L);
    assertEquals("off", HOTEL_ROOM.merge(NEWER, same).getJsonObject("dev_loops").getJsonObject("001023012").getString("state"));
  }

  @Test
  void aFrameOrAStoredPayloadWithoutADeviceTimeIsNotGuarded() {
    JsonObject noTime = OLDER.copy();
    noTime.remove("ts_ms");
    assertEquals(0, HOTEL_ROOM.merge(NEWER, noTime).getInteger("sys_lock_status"));
    assertEquals(2000L, HOTEL_ROOM.merge(NEWER, noTime).getLong("ts_ms"), "the stored time stays");
    JsonObject storedNoTime = NEWER.copy();
    storedNoTime.remove("ts_ms");
    assertEquals(0, HOTEL_ROOM.merge(storedNoTime, OLDER).getInteger("sys_lock_status"));
  }

  @Test
  void aProfileWithoutADeviceTimeMergesOlderTimesByItsRulesAlone() {
    PayloadProfile unguarded = new PayloadProfile("u", HOTEL_ROOM.rules(), MergeRule.REPLACE);
    assertNull(unguarded.deviceTimeField());
    JsonObject rolledBack = unguarded.merge(NEWER, OLDER);
    assertEquals(2000L, rolledBack.getLong("ts_ms"), "MAX keeps the time");
    assertEquals(0, rolledBack.getInteger("sys_lock_status"), "but the lock went back: what the guard prevents");
    assertEquals(List.of(NEWER, OLDER), unguarded.notOlder(List.of(NEWER, OLDER)));
  }

  @Test
  void notOlderKeepsTheFramesThatSetANewDeviceTimeOrCarryNone() {
    JsonObject t5 = new JsonObject().put("ts_ms", 5).put("a", 1);
    JsonObject t3 = new JsonObject().put("ts_ms", 3).put("a", 2);
    JsonObject none = new JsonObject().put("a", 3);
    JsonObject t5again = new JsonObject().put("ts_ms", 5).put("a", 4);
    JsonObject t7 = new JsonObject().put("ts_ms", 7.5).put("a", 5);
    assertEquals(List.of(t5, none, t5again, t7), HOTEL_ROOM.notOlder(List.of(t5, t3, none, t5again, t7)));
  }

  /**
   * The property the worker relies on: whatever is stored, applying only {@link PayloadProfile#notOlder} of a batch
   * one by one equals applying the whole batch one by one (the database applies them so, {@code MergeSqlIT}).
   */
  @Test
  void theFramesNotOlderWithinABatchGiveTheSameStateAsTheWholeBatchOnAnyStoredPayload() {
    Random rnd = new Random(13);
    for (int round = 0; round < 2000; round++) {
      List<JsonObject> all = RandomPayloads.hotelFrames(rnd, 1 + rnd.nextInt(25)).stream().map(HotelRoomPayload::normalize).toList();
      int split = rnd.nextInt(all.size());
      JsonObject stored = HOTEL_ROOM.fold(all.subList(0, split));
      List<JsonObject> batch = new ArrayList<>(all.subList(split, all.size()));
      JsonObject viaTaken = stored;
      for (JsonObject u : HOTEL_ROOM.notOlder(batch)) viaTaken = HOTEL_ROOM.merge(viaTaken, u);
      assertEquals(HOTEL_ROOM.fold(all), viaTaken, "round " + round);
      assertTrue(HOTEL_ROOM.notOlder(batch).size() <= batch.size());
    }
  }
}
