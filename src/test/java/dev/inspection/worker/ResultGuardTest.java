package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.InvalidMessage;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.SlotHash;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
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
  void aZeroSkewAcceptsNothingAheadOfTheClock() {
    ResultGuard g = new ResultGuard(0, 1, 0);
    assertDoesNotThrow(() -> g.check(result("any", 0, NOW), NOW));
    assertThrows(InvalidMessage.class, () -> g.check(result("any", 0, NOW + 1), NOW));
  }

  @Test
  void nonsenseSettingsAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> new ResultGuard(0, 0, 1));
    assertThrows(IllegalArgumentException.class, () -> new ResultGuard(0, 1, -1));
  }
}
