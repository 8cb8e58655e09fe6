package dev.inspection.state;

import static dev.inspection.state.PayloadProfiles.HOTEL_ROOM;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class HotelProfileTest {
  private static JsonObject j(String json) {
    return new JsonObject(json);
  }

  private static JsonObject normalize(String json) {
    return HotelRoomPayload.normalize(j(json));
  }

  private static String refusal(String json) {
    return assertThrows(IllegalArgumentException.class, () -> normalize(json)).getMessage();
  }

  @Test
  void theHotelProfileNormalisesItsFramesAndTheDefaultProfileStoresPayloadsAsTheyCome() {
    JsonObject raw = j("{\"frame\":\"0x0F\",\"ts_ms\":5,\"control_list\":[{\"dev_type\":1,\"dev_addr\":23,\"loop\":12,\"state\":\"on\"}]}");
    assertEquals(HotelRoomPayload.normalize(raw), HOTEL_ROOM.normalize(raw));
    JsonObject plain = j("{\"status\":\"UP\"}");
    assertEquals(plain, PayloadProfiles.DEFAULT.normalize(plain));
  }

  @Test
  void aReportBecomesTimestampLockStatusLoopsAndFaults() {
    JsonObject stored = normalize("""
        {"frame":"0x36","ts_ms":1745000000123,"sys_lock_status":1,"hotel_id":1085,"room_id":"8201",
         "device_list":[{"dev_type":1,"dev_addr":23,"dev_loop":12,"dev_data":100,"status":"on"},
                        {"dev_type":7,"dev_addr":1,"dev_loop":0,"dev_data":0}],
         "fault_list":[{"dev_type":7,"dev_addr":1,"dev_loop":0,"error_type":2,"error_data":9}]}""");
    assertEquals(j("""
        {"ts_ms":1745000000123,"sys_lock_status":1,"hotel_id":1085,"room_id":"8201",
         "dev_loops":{"001023012":{"dev_data":100,"status":"on"},"007001000":{"dev_data":0}},
         "faulty_device_count":[{"dev_type":7,"dev_addr":1,"dev_loop":0,"error_type":2,"error_data":9}]}"""), stored);
    assertEquals(Long.class, stored.getValue("ts_ms").getClass());
  }

  @Test
  void theLoopKeyIsTypeAddressAndLoopEachZeroPaddedToThreeDigits() {
    assertEquals("001023012", HotelRoomPayload.loopKey(1, 23, 12));
    assertEquals("000000000", HotelRoomPayload.loopKey(0, 0, 0));
    assertEquals("999999999", HotelRoomPayload.loopKey(999, 999, 999));
    assertEquals("120005100", HotelRoomPayload.loopKey(120, 5, 100));
    assertThrows(IllegalArgumentException.class, () -> HotelRoomPayload.loopKey(1000, 0, 0));
  }

  @Test
  void aCommandAcceptsLoopAsTheNameOfDevLoop() {
    JsonObject stored = normalize("""
        {"frame":"0x0F","ts_ms":5,"control_list":[{"dev_type":1,"dev_addr":23,"loop":12,"type_l":1,"type_h":80},
                                                  {"dev_type":1,"dev_addr":23,"dev_loop":13,"loop":null,"type_l":0,"type_h":0},
                                                  {"dev_type":1,"dev_addr":23,"dev_loop":14,"loop":14,"type_l":1,"type_h":1}]}""");
    assertEquals(j("""
        {"ts_ms":5,"dev_loops":{"001023012":{"type_l":1,"type_h":80},"001023013":{"type_l":0,"type_h":0},
                                "001023014":{"type_l":1,"type_h":1}}}"""), stored);
  }

  @Test
  void aCommandWhoseLoopAndDevLoopDisagreeIsRefused() {
    assertEquals("control_list[0]: dev_loop 3 and loop 4 disagree",
        refusal("{\"frame\":\"0x0F\",\"control_list\":[{\"dev_type\":1,\"dev_addr\":2,\"dev_loop\":3,\"loop\":4}]}"));
  }

  @Test
  void onlyCommandsTakeLoopForDevLoop() {
    assertEquals("device_list[0].dev_loop: missing", refusal("{\"frame\":\"0x36\",\"device_list\":[{\"dev_type\":1,\"dev_addr\":2,\"loop\":3}]}"));
  }

  @Test
  void theFrameNameIsCaseInsensitive() {
    assertEquals(j("{\"dev_loops\":{\"001002003\":{}}}"),
        normalize("{\"frame\":\"0x0f\",\"control_list\":[{\"dev_type\":1,\"dev_addr\":2,\"loop\":3}]}"));
  }

  @Test
  void absentOrNullFieldsAreLeftOutSoTheStoredValuesStay() {
    assertEquals(new JsonObject(), normalize("{\"frame\":\"0x36\"}"));
    assertEquals(new JsonObject(), normalize(
        "{\"frame\":\"0x36\",\"ts_ms\":null,\"sys_lock_status\":null,\"device_list\":null,\"fault_list\":null}"));
    assertEquals(j("{\"dev_loops\":{},\"faulty_device_count\":[]}"), normalize("{\"frame\":\"0x36\",\"device_list\":[],\"fault_list\":[]}"));
  }

  @Test
  void aCommandSaysNothingAboutFaultsNorAboutReportedLoops() {
    assertEquals(j("{\"ts_ms\":1}"), normalize("""
        {"frame":"0x0F","ts_ms":1,"fault_list":[],"device_list":[{"dev_type":1,"dev_addr":1,"dev_loop":1}]}"""));
    assertEquals(j("{\"ts_ms\":1}"), normalize("""
        {"frame":"0x36","ts_ms":1,"control_list":[{"dev_type":1,"dev_addr":1,"loop":1}]}"""));
  }

  @Test
  void theSameLoopTwiceInOneListKeepsTheLaterElement() {
    assertEquals(j("{\"dev_loops\":{\"001001001\":{\"dev_data\":2}}}"), normalize("""
        {"frame":"0x36","device_list":[{"dev_type":1,"dev_addr":1,"dev_loop":1,"dev_data":1,"status":"on"},
                                      {"dev_type":1,"dev_addr":1,"dev_loop":1,"dev_data":2}]}"""));
  }

  @Test
  void normalizeDoesNotModifyTheRawMessage() {
    JsonObject raw = j("""
        {"frame":"0x0F","control_list":[{"dev_type":1,"dev_addr":1,"loop":1,"x":{"y":1}}]}""");
    JsonObject before = raw.copy();
    JsonObject stored = HotelRoomPayload.normalize(raw);
    stored.getJsonObject("dev_loops").getJsonObject("001001001").getJsonObject("x").put("y", 2);
    assertEquals(before, raw);
  }

  @Test
  void malformedMessagesAreRefusedNamingTheElementAndField() {
    assertEquals("device_list[1].dev_type: missing", refusal("""
        {"frame":"0x36","device_list":[{"dev_type":1,"dev_addr":1,"dev_loop":1},{"dev_addr":1,"dev_loop":1}]}"""));
    assertEquals("device_list[0].dev_type: missing", refusal("{\"frame\":\"0x36\",\"device_list\":[{\"dev_type\":null,\"dev_addr\":1,\"dev_loop\":1}]}"));
    assertEquals("control_list[0].dev_addr: must be an integer 0..999, got \"A1\"",
        refusal("{\"frame\":\"0x0F\",\"control_list\":[{\"dev_type\":1,\"dev_addr\":\"A1\",\"loop\":1}]}"));
    assertEquals("control_list[0].dev_addr: must be an integer 0..999, got \"23\"",
        refusal("{\"frame\":\"0x0F\",\"control_list\":[{\"dev_type\":1,\"dev_addr\":\"23\",\"loop\":1}]}"));
    assertEquals("control_list[0].loop: must be an integer 0..999, got 1000",
        refusal("{\"frame\":\"0x0F\",\"control_list\":[{\"dev_type\":1,\"dev_addr\":1,\"loop\":1000}]}"));
    assertEquals("device_list[0].dev_loop: must be an integer 0..999, got -1",
        refusal("{\"frame\":\"0x36\",\"device_list\":[{\"dev_type\":1,\"dev_addr\":1,\"dev_loop\":-1}]}"));
    assertEquals("device_list[0].dev_type: must be an integer 0..999, got 1.5",
        refusal("{\"frame\":\"0x36\",\"device_list\":[{\"dev_type\":1.5,\"dev_addr\":1,\"dev_loop\":1}]}"));
    assertEquals("device_list[0]: must be an object, got 7", refusal("{\"frame\":\"0x36\",\"device_list\":[7]}"));
    assertEquals("device_list: must be an array, got an object", refusal("{\"frame\":\"0x36\",\"device_list\":{}}"));
    assertEquals("fault_list: must be an array, got \"none\"", refusal("{\"frame\":\"0x36\",\"fault_list\":\"none\"}"));
    assertEquals("frame: must be \"0x36\" (report) or \"0x0F\" (command), got \"0x99\"", refusal("{\"frame\":\"0x99\"}"));
    assertEquals("frame: must be \"0x36\" (report) or \"0x0F\" (command), got null", refusal("{\"ts_ms\":1}"));
    assertEquals("frame: must be \"0x36\" (report) or \"0x0F\" (command), got 54", refusal("{\"frame\":54}"));
    assertEquals("ts_ms: must be an integer, got \"yesterday\"", refusal("{\"frame\":\"0x36\",\"ts_ms\":\"yesterday\"}"));
    assertEquals("sys_lock_status: must be an integer -32768..32767, got true", refusal("{\"frame\":\"0x36\",\"sys_lock_status\":true}"));
    assertThrows(IllegalArgumentException.class, () -> HotelRoomPayload.normalize(null));
  }

  @Test
  void reportsAndCommandsFoldLoopByLoop() {
    List<JsonObject> updates = List.of(
        normalize("""
            {"frame":"0x36","ts_ms":1000,"sys_lock_status":0,
             "device_list":[{"dev_type":1,"dev_addr":23,"dev_loop":12,"dev_data":100},{"dev_type":1,"dev_addr":23,"dev_loop":13,"dev_data":0}],
             "fault_list":[{"dev_type":1,"dev_addr":23,"dev_loop":13,"error_type":1}]}"""),
        normalize("""
            {"frame":"0x0F","ts_ms":1500,"control_list":[{"dev_type":1,"dev_addr":23,"loop":13,"type_l":1,"type_h":60}]}"""),
        normalize("""
            {"frame":"0x36","ts_ms":2000,"sys_lock_status":null,
             "device_list":[{"dev_type":2,"dev_addr":5,"dev_loop":1,"dev_data":7}],"fault_list":[]}"""));
    assertEquals(j("""
        {"ts_ms":2000,"sys_lock_status":0,
         "dev_loops":{"001023012":{"dev_data":100},"001023013":{"type_l":1,"type_h":60},"002005001":{"dev_data":7}},
         "faulty_device_count":[]}"""), HOTEL_ROOM.fold(updates));
  }

  @Test
  void severalUpdatesOfOneLoopLeaveTheLastOne() {
    List<JsonObject> updates = new ArrayList<>();
    for (int v = 0; v < 5; v++) {
      updates.add(normalize("{\"frame\":\"0x36\",\"ts_ms\":" + (100 + v) + ",\"device_list\":[{\"dev_type\":1,\"dev_addr\":1,\"dev_loop\":1,\"dev_data\":" + v + "}]}"));
    }
    assertEquals(j("{\"ts_ms\":104,\"dev_loops\":{\"001001001\":{\"dev_data\":4}}}"), HOTEL_ROOM.fold(updates));
  }

  @Test
  void aNullLockStatusKeepsTheStoredOne() {
    JsonObject stored = j("{\"ts_ms\":1,\"sys_lock_status\":1}");
    assertEquals(j("{\"ts_ms\":2,\"sys_lock_status\":1}"), HOTEL_ROOM.merge(stored, normalize("{\"frame\":\"0x36\",\"ts_ms\":2,\"sys_lock_status\":null}")));
    assertEquals(j("{\"ts_ms\":2,\"sys_lock_status\":1}"), HOTEL_ROOM.merge(stored, normalize("{\"frame\":\"0x0F\",\"ts_ms\":2}")));
    assertEquals(j("{\"ts_ms\":2,\"sys_lock_status\":0}"), HOTEL_ROOM.merge(stored, normalize("{\"frame\":\"0x36\",\"ts_ms\":2,\"sys_lock_status\":0}")));
  }

  @Test
  void theTimestampNeverMovesBackward() {
    JsonObject stored = j("{\"ts_ms\":1745000000500}");
    assertEquals(stored, HOTEL_ROOM.merge(stored, normalize("{\"frame\":\"0x36\",\"ts_ms\":1745000000499}")));
    assertEquals(j("{\"ts_ms\":1745000000501}"), HOTEL_ROOM.merge(stored, normalize("{\"frame\":\"0x36\",\"ts_ms\":1745000000501}")));
  }

  @Test
  void aReportReplacesTheWholeFaultListAndOnlyAReportDoes() {
    JsonObject stored = j("{\"faulty_device_count\":[{\"dev_type\":1},{\"dev_type\":2}]}");
    assertEquals(j("{\"faulty_device_count\":[{\"dev_type\":3}]}"),
        HOTEL_ROOM.merge(stored, normalize("{\"frame\":\"0x36\",\"fault_list\":[{\"dev_type\":3}]}")));
    assertEquals(stored, HOTEL_ROOM.merge(stored, normalize("{\"frame\":\"0x36\"}")));
    assertEquals(stored, HOTEL_ROOM.merge(stored, normalize("{\"frame\":\"0x0F\",\"fault_list\":[]}")));
  }

  @Test
  void theFramesOfABatchNotOlderThanEachOtherAppliedOntoTheStoredPayloadEqualTheFramesOneByOne() {
    Random rnd = new Random(20260425L);
    for (int round = 0; round < 300; round++) {
      List<JsonObject> frames = RandomPayloads.hotelFrames(rnd, 1 + rnd.nextInt(20));
      List<JsonObject> updates = frames.stream().map(HotelRoomPayload::normalize).toList();
      JsonObject oneByOne = null;
      JsonObject batched = null;
      int i = 0;
      while (i < updates.size()) {
        int end = Math.min(updates.size(), i + 1 + rnd.nextInt(5));
        for (JsonObject u : updates.subList(i, end)) oneByOne = HOTEL_ROOM.merge(oneByOne, u);
        // what the worker sends for a profile with a device time: a single fold could not skip what is older than stored
        for (JsonObject u : HOTEL_ROOM.notOlder(updates.subList(i, end))) batched = HOTEL_ROOM.merge(batched, u);
        assertEquals(oneByOne, batched, "round " + round + " after " + end + " frames: " + frames.subList(0, end));
        i = end;
      }
      assertEquals(oneByOne, HOTEL_ROOM.fold(updates));
      long maxTs = frames.stream().filter(f -> f.getValue("ts_ms") != null).mapToLong(f -> f.getLong("ts_ms")).max().orElse(-1);
      if (maxTs >= 0) assertEquals(maxTs, oneByOne.getLong("ts_ms"));
      else assertFalse(oneByOne.containsKey("ts_ms"));
    }
  }

  @Test
  void hotelRoomAndGuidAreKeptAsSentSoTheRoomCanBeFoundAndBadOnesAreNamed() {
    JsonObject stored = normalize("{\"frame\":\"0x0F\",\"hotel_id\":\"H-1\",\"room_id\":8201,\"guid\":\"6f1c\",\"control_list\":[]}");
    assertEquals(j("{\"hotel_id\":\"H-1\",\"room_id\":8201,\"guid\":\"6f1c\",\"dev_loops\":{}}"), stored);
    assertEquals("hotel_id: must be a string of 1..64 characters or a non-negative integer, got -1",
        refusal("{\"frame\":\"0x36\",\"hotel_id\":-1}"));
    assertEquals("guid: must be a string of 1..64 characters, got 7", refusal("{\"frame\":\"0x36\",\"guid\":7}"));
    assertFalse(normalize("{\"frame\":\"0x36\",\"room_id\":null}").containsKey("room_id"));
  }
}
