package dev.inspection.messaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.SlotMapWindow.Kind;
import dev.inspection.messaging.SlotMapWindow.Verdict;
import dev.inspection.messaging.SlotMapWindow.Version;
import java.util.List;
import org.junit.jupiter.api.Test;

class SlotMapWindowTest {
  // seed 000 §3.4 with small numbers: T0 = 1000, effective T0 + 300, window until T0 + 600
  static final long T0 = 1_000;
  static final Version V1 = new Version(1, 64, 0, 0);
  static final Version V2 = new Version(2, 128, T0 + 300, T0 + 600);
  static final SlotMapWindow MAP = new SlotMapWindow(List.of(V2, V1));

  @Test
  void probesStampTheOldVersionUntilTheEffectiveTimeThenTheNewOne() {
    assertEquals(V1, MAP.inForce(T0));
    assertEquals(V1, MAP.inForce(T0 + 299));
    assertEquals(V2, MAP.inForce(T0 + 300));
    assertEquals(V2, MAP.inForce(T0 + 10_000));
    assertEquals(V2, MAP.newest());
  }

  @Test
  void aNodeWhoseClockIsBeforeEveryVersionUsesTheOldest() {
    SlotMapWindow late = new SlotMapWindow(List.of(new Version(1, 16, 5_000, 0)));
    assertEquals(16, late.inForce(0).totalSlots());
  }

  @Test
  void beforeTheEffectiveTimeTheOldVersionIsAcceptedAndAnEarlySwitchToo() {
    assertEquals(new Verdict(Kind.ACCEPT, 64, null), MAP.judge(1, T0 + 100));
    // a probe whose clock runs ahead switched early: its slot is checked with the new count
    assertEquals(new Verdict(Kind.ACCEPT, 128, null), MAP.judge(2, T0 + 100));
  }

  @Test
  void duringTheWindowBothVersionsAreAcceptedEachWithItsOwnCount() {
    assertEquals(new Verdict(Kind.ACCEPT, 64, null), MAP.judge(1, T0 + 300));
    assertEquals(new Verdict(Kind.ACCEPT, 64, null), MAP.judge(1, T0 + 599));
    assertEquals(new Verdict(Kind.ACCEPT, 128, null), MAP.judge(2, T0 + 599));
  }

  @Test
  void afterTheWindowTheOldVersionIsStale() {
    Verdict v = MAP.judge(1, T0 + 600);
    assertEquals(Kind.STALE, v.kind());
    assertTrue(v.detail().contains("slot_map_version 1") && v.detail().contains("version 2"), v.detail());
    assertEquals(Kind.ACCEPT, MAP.judge(2, T0 + 600).kind());
    assertEquals("stale_slot_map", SlotMapWindow.STALE_REASON);
  }

  @Test
  void anUnstampedEnvelopeCountsAsVersionOne() {
    assertEquals(new Verdict(Kind.ACCEPT, 64, null), MAP.judge(0, T0));
    assertEquals(Kind.STALE, MAP.judge(0, T0 + 600).kind());
    assertEquals(new Verdict(Kind.ACCEPT, 32, null), SlotMapWindow.single(32).judge(0, 0));
  }

  @Test
  void aVersionTwoReshardsBackIsStaleEvenInTheNextWindow() {
    Version v3 = new Version(3, 256, T0 + 1_000, T0 + 1_300);
    SlotMapWindow map = new SlotMapWindow(List.of(V1, V2, v3));
    assertEquals(Kind.ACCEPT, map.judge(2, T0 + 1_100).kind());
    assertEquals(Kind.STALE, map.judge(1, T0 + 1_100).kind());
    assertEquals(new Verdict(Kind.ACCEPT, 256, null), map.judge(3, T0 + 1_100));
  }

  @Test
  void anUnknownNewerVersionAsksForARefreshAndAnUnknownOlderOneIsStale() {
    assertEquals(Kind.UNKNOWN, MAP.judge(3, T0).kind());
    SlotMapWindow gap = new SlotMapWindow(List.of(new Version(2, 8, 0, 0)));
    assertEquals(Kind.STALE, gap.judge(1, 0).kind());
  }

  @Test
  void queuesOfTheNewCountExistBeforeTheEffectiveTimeAndOfBothDuringTheWindow() {
    assertEquals(64, SlotMapWindow.single(64).queueSlots(0));
    assertEquals(128, MAP.queueSlots(T0));
    assertEquals(128, MAP.queueSlots(T0 + 10_000));
    // shrinking 128 -> 64: the old queues stay while the window is open, then are retired
    SlotMapWindow shrink = new SlotMapWindow(List.of(new Version(1, 128, 0, 0), new Version(2, 64, T0 + 300, T0 + 600)));
    assertEquals(128, shrink.queueSlots(T0));
    assertEquals(128, shrink.queueSlots(T0 + 599));
    assertEquals(64, shrink.queueSlots(T0 + 600));
    assertEquals(List.of(), shrink.retiredSlots(T0 + 599));
    List<Integer> retired = shrink.retiredSlots(T0 + 600);
    assertEquals(64, retired.size());
    assertEquals(64, retired.get(0));
    assertEquals(127, retired.get(63));
  }

  @Test
  void growingRetiresNoQueueAndAPendingVersionRetiresNothing() {
    assertEquals(List.of(), MAP.retiredSlots(T0 + 10_000));
    SlotMapWindow pending = new SlotMapWindow(List.of(new Version(1, 128, 0, 0), new Version(2, 64, T0 + 300, T0 + 600)));
    assertEquals(List.of(), pending.retiredSlots(T0));
  }

  @Test
  void doublingMovesAboutHalfTheDevicesEachToItsSlotPlusTheOldCount() {
    int moved = 0;
    for (int i = 0; i < 10_000; i++) {
      String id = "dev_" + i;
      int from = SlotHash.slotOf(id, 64);
      int to = SlotMapWindow.moved(id, 64, 128);
      if (to >= 0) {
        moved++;
        assertEquals(from + 64, to, id);
        assertEquals(to, SlotHash.slotOf(id, 128));
      } else {
        assertEquals(from, SlotHash.slotOf(id, 128), id);
      }
    }
    assertTrue(moved > 4_500 && moved < 5_500, "moved " + moved);
    assertEquals(-1, SlotMapWindow.moved("dev_1", 64, 64));
  }

  @Test
  void aMalformedMapIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new SlotMapWindow(List.of()));
    assertThrows(IllegalArgumentException.class, () -> new SlotMapWindow(List.of(V1, new Version(1, 8, 0, 0))));
    assertThrows(IllegalArgumentException.class, () -> new Version(0, 8, 0, 0));
    assertThrows(IllegalArgumentException.class, () -> new Version(1, 0, 0, 0));
  }
}
