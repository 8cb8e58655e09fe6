package dev.inspection.messaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

/** The slot queues' names: three digits at least, as operators, drills and the broker's existing queues know them. */
class TopologyNamesTest {
  private final Topology topology = new Topology("insp", 256, 1_000_000, 5);

  @Test
  void slotNumbersArePaddedToThreeDigits() {
    assertEquals("insp.status.s000.high", topology.queue(0, Priority.HIGH));
    assertEquals("insp.status.s007.normal", topology.queue(7, Priority.NORMAL));
    assertEquals("insp.status.s042.low", topology.queue(42, Priority.LOW));
    assertEquals("insp.status.s255.normal", topology.queue(255, Priority.NORMAL));
  }

  @Test
  void slotsBeyondNineHundredNinetyNineKeepAllTheirDigits() {
    assertEquals("insp.status.s1023.high", topology.queue(1023, Priority.HIGH));
  }

  @Test
  void everyNameIsWhatTheFormatStringGave() {
    for (int slot = 0; slot < 2048; slot++) {
      for (Priority p : Priority.values()) {
        assertEquals(String.format("%s.status.s%03d.%s", "insp", slot, p.wire), topology.queue(slot, p));
      }
    }
  }

  @Test
  void routingKeysAreBuiltOnceForTheConfiguredSlotsAndStillNamedBeyondThem() {
    for (int slot = -1; slot < 600; slot++) {
      for (Priority p : Priority.values()) {
        assertEquals("slot." + slot + "." + p.wire, topology.routingKey(slot, p), "slot " + slot);
        if (slot >= 0 && slot < 256) assertSame(topology.routingKey(slot, p), topology.routingKey(slot, p), "one string per slot and priority");
      }
    }
  }
}
