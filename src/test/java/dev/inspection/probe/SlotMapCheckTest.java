package dev.inspection.probe;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SlotMapCheckTest {
  @Test
  void aProbeThatAgreesWithTheMapInForceStarts() {
    assertNull(SlotMapCheck.refusal(256, 256, 1, "http://s/api/v1/probe/slot-map"));
  }

  @Test
  void aProbeWithAnotherSlotCountIsRefusedNamingBothValues() {
    String m = SlotMapCheck.refusal(512, 256, 3, "http://s/api/v1/probe/slot-map");
    assertTrue(m.contains("slots.total is 512") && m.contains("has 256 slots") && m.contains("version 3"), m);
    assertTrue(m.contains("set slots.total=256"), m);
  }
}
