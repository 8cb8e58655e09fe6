package dev.inspection.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.store.SlotMapStart.Decision;
import dev.inspection.store.SlotMapStart.InForce;
import java.time.OffsetDateTime;
import org.junit.jupiter.api.Test;

class SlotMapStartTest {
  private static final InForce V3_OF_128 = new InForce(3, 128, OffsetDateTime.parse("2026-12-01T10:00:00Z"));

  @Test
  void anInstallationWithoutAMapIsSeededFromSlotsTotal() {
    assertEquals(Decision.SEED, SlotMapStart.decide(null, 256));
  }

  @Test
  void aNodeThatAgreesWithTheMapInForceStarts() {
    assertEquals(Decision.AGREE, SlotMapStart.decide(V3_OF_128, 128));
  }

  @Test
  void aNodeConfiguredWithAnotherSlotCountIsRefused() {
    assertEquals(Decision.REFUSE, SlotMapStart.decide(V3_OF_128, 256));
    assertEquals(Decision.REFUSE, SlotMapStart.decide(V3_OF_128, 64));
  }

  @Test
  void theRefusalNamesBothValuesTheKeyAndWhatToDo() {
    String m = SlotMapStart.refusal(V3_OF_128, 256, "prod");
    assertTrue(m.contains("slots.total is 256"), m);
    assertTrue(m.contains("has 128 slots"), m);
    assertTrue(m.contains("version 3") && m.contains("schema prod"), m);
    assertTrue(m.contains("set slots.total=128") && m.contains("POST /api/v1/slot-map"), m);
  }
}
