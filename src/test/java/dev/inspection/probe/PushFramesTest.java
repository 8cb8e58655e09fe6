package dev.inspection.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.Priority;
import dev.inspection.messaging.SlotHash;
import dev.inspection.outbox.CheckResult;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class PushFramesTest {
  private static final Instant NOW = Instant.ofEpochMilli(1_745_000_100_000L);

  static JsonObject frame(String device) {
    return new JsonObject().put("frame", "0x36").put("hotel_id", 1085).put("room_id", "8201").put("device_id", device).put("guid", "g-" + device)
        .put("ts_ms", 1_745_000_000_000L).put("sys_lock_status", 1)
        .put("device_list", new JsonArray().add(new JsonObject().put("dev_type", 1).put("dev_addr", 23).put("dev_loop", 12).put("state", "on")))
        .put("fault_list", new JsonArray());
  }

  private static PushFrames.Read read(Object body) {
    return PushFrames.read(body.toString(), "hotel_room", NOW, 256, 100);
  }

  private static PushFrames.Refused refusedAlone(JsonObject frame) {
    PushFrames.Read r = read(frame);
    assertTrue(r.taken().isEmpty());
    return r.refused().get(0);
  }

  @Test
  void aValidFrameBecomesAResultOfItsDeviceReceivedNowWithTheFrameAndItsProfileAsPayload() {
    PushFrames.Read r = read(frame("rcu-1"));
    assertTrue(r.single());
    CheckResult c = r.taken().get(0).result();
    assertEquals("rcu-1", c.deviceId());
    assertEquals(SlotHash.slotOf("rcu-1", 256), c.slot());
    assertEquals(NOW, c.collectedAt(), "collected at the probe; the device's time stays in ts_ms");
    assertEquals(Priority.NORMAL, c.priority());
    assertEquals(frame("rcu-1").put("payload_profile", "hotel_room"), c.payload());
  }

  @Test
  void everyRequiredFieldIsNamedWhenMissingOrMalformed() {
    for (String field : List.of("device_id", "hotel_id", "room_id", "guid", "ts_ms")) {
      JsonObject f = frame("d");
      f.remove(field);
      PushFrames.Refused r = refusedAlone(f);
      assertEquals(field, r.field());
      assertTrue(r.error().startsWith(field + ": missing"), r.error());
    }
    assertEquals("ts_ms", refusedAlone(frame("d").put("ts_ms", "yesterday")).field());
    assertEquals("ts_ms", refusedAlone(frame("d").put("ts_ms", 1.5)).field());
    assertEquals("ts_ms", refusedAlone(frame("d").put("ts_ms", -5)).field());
    assertEquals("device_id", refusedAlone(frame("d").put("device_id", "x".repeat(65))).field());
    assertEquals("device_id", refusedAlone(frame("d").put("device_id", "   ")).field());
    assertEquals("hotel_id", refusedAlone(frame("d").put("hotel_id", new JsonObject())).field());
    assertEquals("guid", refusedAlone(frame("d").put("guid", 7)).field());
    assertEquals("frame", refusedAlone(frame("d").put("frame", "0x99")).field());
    assertEquals("guid", refusedAlone(frame("d").put("guid", "a\u0000b")).field());
    assertEquals("frame", refusedAlone(frame("d").put("note", "a\u0000b")).field(), "a NUL anywhere: the database would refuse it");
    PushFrames.Refused deep = refusedAlone(frame("d").put("device_list", new JsonArray().add(new JsonObject().put("dev_type", 1).put("dev_addr", "A1")
        .put("dev_loop", 0))));
    assertEquals("device_list[0].dev_addr", deep.field());
    assertTrue(read(frame("d").put("hotel_id", "H-1085").put("room_id", 8201)).refused().isEmpty(), "identifiers as strings or integers");
  }

  @Test
  void aMalformedFrameInAnArrayIsRefusedAloneWithItsIndex() {
    JsonObject bad = frame("d2");
    bad.remove("ts_ms");
    PushFrames.Read r = read(new JsonArray().add(frame("d1")).add(bad).add("not a frame").add(frame("d3")));
    assertFalse(r.single());
    assertEquals(List.of(0, 3), r.taken().stream().map(PushFrames.Taken::index).toList());
    assertEquals(List.of(1, 2), r.refused().stream().map(PushFrames.Refused::index).toList());
    assertEquals("ts_ms", r.refused().get(0).field());
    assertEquals("frame", r.refused().get(1).field());
    assertEquals(4, r.frames());
  }

  @Test
  void aBodyThatIsNoFrameAtAllIsRefusedAsAWhole() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> read("{nope")).getMessage().contains("not JSON"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> read("42")).getMessage().contains("one frame"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> read(new JsonArray())).getMessage().contains("no frame"));
    JsonArray many = new JsonArray();
    for (int i = 0; i < 101; i++) many.add(frame("d" + i));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> read(many)).getMessage().contains("probe.ingest.max.frames"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> PushFrames.read(frame("d").encode(), "default", NOW, 256, 100)).getMessage()
        .startsWith("unknown push profile 'default'"));
  }
}
