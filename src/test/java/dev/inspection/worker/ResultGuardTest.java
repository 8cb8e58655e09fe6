package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.InvalidMessage;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.SlotHash;
import dev.inspection.messaging.SlotMapWindow;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResultGuardTest {
  private static final long NOW = 1_700_000_000_000L;
  private static final int SLOTS = 16;

  private static Envelope result(String device, int slot, long cycle) {
    return new Envelope(Envelope.messageId("p", cycle, device, 1), device, slot, 1, 1, 1, "p", cycle, 1, Instant.ofEpochMilli(cycle),
        Priority.NORMAL, new JsonObject().put("status", "UP"));
  }

  /** A device whose home slot is not {@code slot}. */
  private static String deviceNotIn(int slot) {
    for (int i = 0; ; i++) if (SlotHash.slotOf("dev-" + i, SLOTS) != slot) return "dev-" + i;
  }

  private static String deviceIn(int slot) {
    for (int i = 0; ; i++) if (SlotHash.slotOf("dev-" + i, SLOTS) == slot) return "dev-" + i;
  }

  @Test
  void aDeviceThatHashesToTheQueuesSlotWithAPresentCycleIsAccepted() {
    ResultGuard g = new ResultGuard(5, SLOTS, 600_000);
    assertDoesNotThrow(() -> g.check(result(deviceIn(5), 5, NOW), NOW));
    assertDoesNotThrow(() -> g.check(result(deviceIn(5), 5, 0), NOW), "old results are the merge rule's business, not the guard's");
  }

  @Test
  void aDeviceOfAnotherSlotIsWrongSlotEvenWhenTheEnvelopeClaimsThisOne() {
    ResultGuard g = new ResultGuard(5, SLOTS, 600_000);
    String stranger = deviceNotIn(5);
    InvalidMessage e = assertThrows(InvalidMessage.class, () -> g.check(result(stranger, 5, NOW), NOW));
    assertEquals("wrong_slot", e.reason);
    assertTrue(e.getMessage().contains("hashes to slot " + SlotHash.slotOf(stranger, SLOTS)), e.getMessage());
  }

  @Test
  void anEnvelopeNamingAnotherSlotIsWrongSlot() {
    ResultGuard g = new ResultGuard(5, SLOTS, 600_000);
    InvalidMessage e = assertThrows(InvalidMessage.class, () -> g.check(result(deviceIn(5), 6, NOW), NOW));
    assertEquals("wrong_slot", e.reason);
    assertTrue(e.getMessage().contains("slot_id 6 arrived on slot 5"), e.getMessage());
  }

  @Test
  void aCycleFurtherAheadThanTheSkewIsFutureCycleAndTheLimitItselfIsAccepted() {
    ResultGuard g = new ResultGuard(5, SLOTS, 600_000);
    String d = deviceIn(5);
    assertDoesNotThrow(() -> g.check(result(d, 5, NOW + 600_000), NOW));
    InvalidMessage e = assertThrows(InvalidMessage.class, () -> g.check(result(d, 5, NOW + 600_001), NOW));
    assertEquals("future_cycle", e.reason);
    assertTrue(e.getMessage().contains("600001 ms ahead"), e.getMessage());
    InvalidMessage far = assertThrows(InvalidMessage.class, () -> g.check(result(d, 5, Long.MAX_VALUE), NOW));
    assertEquals("future_cycle", far.reason, "no overflow at the end of the range");
  }

  @Test
  void aResultCollectedMoreThanADayAfterItsCycleIsCollectedAfterCycleAndTheLimitItselfIsAccepted() {
    ResultGuard g = new ResultGuard(5, SLOTS, 600_000);
    String d = deviceIn(5);
    long cycle = NOW - 2 * ResultGuard.MAX_COLLECTED_AFTER_CYCLE_MS;
    assertDoesNotThrow(() -> g.check(collectedAt(d, cycle, cycle + ResultGuard.MAX_COLLECTED_AFTER_CYCLE_MS), NOW));
    assertDoesNotThrow(() -> g.check(collectedAt(d, cycle, cycle - 3_600_000), NOW), "collected before its cycle (the probe's high-water mark)");
    InvalidMessage e = assertThrows(InvalidMessage.class, () -> g.check(collectedAt(d, cycle, cycle + ResultGuard.MAX_COLLECTED_AFTER_CYCLE_MS + 1), NOW));
    assertEquals("collected_after_cycle", e.reason);
    assertTrue(e.getMessage().contains("86400001 ms after cycle_id " + cycle), e.getMessage());
  }

  private static Envelope collectedAt(String device, long cycle, long collectedMs) {
    return new Envelope(Envelope.messageId("p", cycle, device, 1), device, 5, 1, 1, 1, "p", cycle, 1, Instant.ofEpochMilli(collectedMs),
        Priority.NORMAL, new JsonObject().put("status", "UP"));
  }

  @Test
  void aZeroSkewAcceptsNothingAheadOfTheClock() {
    ResultGuard g = new ResultGuard(0, 1, 0);
    assertDoesNotThrow(() -> g.check(result("any", 0, NOW), NOW));
    assertThrows(InvalidMessage.class, () -> g.check(result("any", 0, NOW + 1), NOW));
  }

  private static Envelope stamped(String device, int slot, long version) {
    return new Envelope(Envelope.messageId("p", NOW, device, 1), device, slot, version, 1, 1, "p", NOW, 1, Instant.ofEpochMilli(NOW),
        Priority.NORMAL, new JsonObject().put("status", "UP"));
  }

  /** 16 -> 32 slots, effective at NOW, grace window until NOW + 1000. */
  private static final SlotMapWindow RESHARD = new SlotMapWindow(List.of(new SlotMapWindow.Version(1, 16, 0, 0),
      new SlotMapWindow.Version(2, 32, NOW, NOW + 1_000)));

  /** A device in slot 5 of 16 that moves to slot 21 of 32. */
  private static String movingFrom5() {
    for (int i = 0; ; i++) if (SlotHash.slotOf("dev-" + i, 16) == 5 && SlotHash.slotOf("dev-" + i, 32) == 21) return "dev-" + i;
  }

  @Test
  void inTheGraceWindowEachVersionIsCheckedWithItsOwnSlotCount() {
    String d = movingFrom5();
    assertDoesNotThrow(() -> new ResultGuard(5, () -> RESHARD, 600_000).check(stamped(d, 5, 1), NOW + 999), "old version, old slot");
    assertDoesNotThrow(() -> new ResultGuard(21, () -> RESHARD, 600_000).check(stamped(d, 21, 2), NOW + 999), "new version, new slot");
    InvalidMessage e = assertThrows(InvalidMessage.class, () -> new ResultGuard(5, () -> RESHARD, 600_000).check(stamped(d, 5, 2), NOW));
    assertEquals("wrong_slot", e.reason);
    assertTrue(e.getMessage().contains("of 32, slot map version 2"), e.getMessage());
  }

  @Test
  void afterTheWindowTheOldVersionIsStaleSlotMapAndAnUnknownVersionIsRefused() {
    String d = movingFrom5();
    InvalidMessage e = assertThrows(InvalidMessage.class, () -> new ResultGuard(5, () -> RESHARD, 600_000).check(stamped(d, 5, 1), NOW + 1_000));
    assertEquals("stale_slot_map", e.reason);
    assertTrue(e.getMessage().contains("missed the switch"), e.getMessage());
    InvalidMessage u = assertThrows(InvalidMessage.class, () -> new ResultGuard(21, () -> RESHARD, 600_000).check(stamped(d, 21, 3), NOW));
    assertEquals("unknown_slot_map", u.reason);
  }

  private static Envelope withPayload(String device, JsonObject payload) {
    return new Envelope(Envelope.messageId("p", NOW, device, 1), device, 0, 1, 1, 1, "p", NOW, 1, Instant.ofEpochMilli(NOW), Priority.NORMAL, payload);
  }

  @Test
  void aNulInAnyStringOfThePayloadIsInvalidPayloadNamingItsPath() {
    ResultGuard g = new ResultGuard(0, 1, 600_000);
    JsonObject nested = new JsonObject().put("status", "UP").put("checks", new JsonArray()
        .add(new JsonObject().put("name", "disk"))
        .add(new JsonObject().put("name", "cpu").put("tags", new JsonArray().add("ok").add("bad\u0000tag"))));
    InvalidMessage e = assertThrows(InvalidMessage.class, () -> g.check(withPayload("d", nested), NOW));
    assertEquals("invalid_payload", e.reason);
    assertTrue(e.getMessage().startsWith("payload.checks[1].tags[1] contains a NUL character"), e.getMessage());
    assertTrue(e.getMessage().contains("22P05"), e.getMessage());

    InvalidMessage key = assertThrows(InvalidMessage.class, () -> g.check(withPayload("d", new JsonObject()
        .put("status", "UP").put("deep", new JsonObject().put("k\u0000ey", 1))), NOW));
    assertEquals("invalid_payload", key.reason);
    assertTrue(key.getMessage().startsWith("payload.deep.k\\u0000ey (the key) contains"), key.getMessage());
    assertEquals(-1, key.getMessage().indexOf('\u0000'), "the detail itself holds no NUL: it is stored as text");
  }

  @Test
  void aNulReadFromTheWireIsFoundTooAndOrdinaryPayloadsPass() throws Exception {
    ResultGuard g = new ResultGuard(0, 1, 600_000);
    Envelope parsed = Envelope.parse(withPayload("d", new JsonObject().put("status", "UP")).toJson()
        .put("payload", new JsonObject("{\"status\":\"UP\",\"list\":[{\"a\":[\"x\\u0000\"]}]}")).encode().getBytes(StandardCharsets.UTF_8), 65536);
    InvalidMessage e = assertThrows(InvalidMessage.class, () -> g.check(parsed, NOW));
    assertTrue(e.getMessage().startsWith("payload.list[0].a[0] contains"), e.getMessage());
    assertDoesNotThrow(() -> g.check(withPayload("d", new JsonObject().put("status", "UP").put("n", 1.5).putNull("x")
        .put("a", new JsonArray().add(true).add("unicode \u00e9\u2603 is fine"))), NOW));
  }

  @Test
  void aNulInTheDeviceOrMessageIdOrAMessageIdLongerThanItsColumnIsBadField() {
    ResultGuard g = new ResultGuard(0, 1, 600_000);
    InvalidMessage device = assertThrows(InvalidMessage.class, () -> g.check(withPayload("d\u0000x", new JsonObject()), NOW));
    assertEquals("bad_field", device.reason);
    assertTrue(device.getMessage().startsWith("envelope.device_id contains a NUL"), device.getMessage());

    Envelope nulNode = new Envelope(Envelope.messageId("p\u0000", NOW, "d", 1), "d", 0, 1, 1, 1, "p\u0000", NOW, 1, Instant.ofEpochMilli(NOW),
        Priority.NORMAL, new JsonObject());
    assertTrue(assertThrows(InvalidMessage.class, () -> g.check(nulNode, NOW)).getMessage().startsWith("envelope.message_id contains a NUL"));

    String node = "n".repeat(160);
    Envelope longId = new Envelope(Envelope.messageId(node, NOW, "d", 1), "d", 0, 1, 1, 1, node, NOW, 1, Instant.ofEpochMilli(NOW),
        Priority.NORMAL, new JsonObject());
    InvalidMessage tooLong = assertThrows(InvalidMessage.class, () -> g.check(longId, NOW));
    assertEquals("bad_field", tooLong.reason);
    assertTrue(tooLong.getMessage().contains("at most 160"), tooLong.getMessage());
    String fits = "n".repeat(160 - ":1700000000000:d:1".length());
    assertDoesNotThrow(() -> g.check(new Envelope(Envelope.messageId(fits, NOW, "d", 1), "d", 0, 1, 1, 1, fits, NOW, 1, Instant.ofEpochMilli(NOW),
        Priority.NORMAL, new JsonObject()), NOW));
  }

  @Test
  void nonsenseSettingsAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> new ResultGuard(0, 0, 1));
    assertThrows(IllegalArgumentException.class, () -> new ResultGuard(0, 1, -1));
  }

  /** Versions 1 (16 slots) and 2 (32 slots), v2 in force with its window open. */
  private static SlotMapWindow resharded() {
    return new SlotMapWindow(List.of(new SlotMapWindow.Version(1, SLOTS, 0, 0), new SlotMapWindow.Version(2, 2 * SLOTS, NOW - 1_000, NOW + 60_000)));
  }

  private static Envelope stamped(Envelope e, int slot, long version) {
    return new Envelope(e.messageId(), e.deviceId(), slot, version, e.resourceVersion(), e.planVersion(), e.isNode(), e.cycleId(), e.seq(),
        e.collectedAt(), e.priority(), e.payload());
  }

  @Test
  void aSwitchedSlotForwardsAnOldVersionsResultOfAMovedDeviceToItsNewSlotRestamped() {
    String moved = null;
    for (int i = 0; moved == null; i++) if (SlotHash.slotOf("mv-" + i, SLOTS) == 5 && SlotHash.slotOf("mv-" + i, 2 * SLOTS) == 5 + SLOTS) moved = "mv-" + i;
    String stays = null;
    for (int i = 0; stays == null; i++) if (SlotHash.slotOf("st-" + i, SLOTS) == 5 && SlotHash.slotOf("st-" + i, 2 * SLOTS) == 5) stays = "st-" + i;
    ResultGuard switched = new ResultGuard(5, ResultGuardTest::resharded, 600_000, 2);
    Envelope old = result(moved, 5, NOW);
    ResultGuard.Forward f = assertThrows(ResultGuard.Forward.class, () -> switched.check(old, NOW));
    assertEquals("forwarded", f.reason);
    assertEquals(5 + SLOTS, f.restamped.slotId());
    assertEquals(2, f.restamped.slotMapVersion());
    assertEquals(old.messageId(), f.restamped.messageId(), "INV-6: the result keeps its id");
    assertEquals(old.seq(), f.restamped.seq());
    // restamped, it passes the new slot's guard
    assertDoesNotThrow(() -> new ResultGuard(5 + SLOTS, ResultGuardTest::resharded, 600_000, 2).check(f.restamped, NOW));
    // a device that stays is written here; a slot not switched yet writes the moved device itself (it still owns it)
    String staying = stays;
    assertDoesNotThrow(() -> switched.check(result(staying, 5, NOW), NOW));
    assertDoesNotThrow(() -> new ResultGuard(5, ResultGuardTest::resharded, 600_000, 1).check(old, NOW));
    // a result already of version 2 is never forwarded
    String newDevice = stays;
    assertDoesNotThrow(() -> switched.check(stamped(result(newDevice, 5, NOW), 5, 2), NOW));
    // after the window the old version is stale, not forwarded
    InvalidMessage stale = assertThrows(InvalidMessage.class, () -> switched.check(old, NOW + 120_000));
    assertEquals(SlotMapWindow.STALE_REASON, stale.reason);
  }
}
