package dev.inspection.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.SlotHash;
import dev.inspection.scheduler.SlotSwitch.Move;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SlotSwitchTest {
  @Test
  void aDeviceMovesWhenItsCurrentSlotIsNotItsSlotUnderTheNewCount() {
    List<String> ids = new ArrayList<>();
    List<Integer> slots = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      ids.add("d" + i);
      slots.add(SlotHash.slotOf("d" + i, 64));
    }
    List<Move> moves = SlotSwitch.moves(ids, slots, 128);
    int expected = 0;
    for (int i = 0; i < 500; i++) if (SlotHash.slotOf("d" + i, 64) != SlotHash.slotOf("d" + i, 128)) expected++;
    assertEquals(expected, moves.size());
    for (Move m : moves) {
      assertEquals(SlotHash.slotOf(m.deviceId(), 64), m.from());
      assertEquals(SlotHash.slotOf(m.deviceId(), 128), m.to());
      assertEquals(m.from() + 64, m.to(), "doubling moves a device to its slot plus the old count");
    }
  }

  @Test
  void aSwitchDecidedFromCurrentSlotIsIdempotent() {
    List<String> ids = List.of("a", "b", "c", "d");
    List<Integer> atNew = ids.stream().map(d -> SlotHash.slotOf(d, 128)).toList();
    assertEquals(List.of(), SlotSwitch.moves(ids, atNew, 128), "devices already in their new slot stay");
    assertEquals(List.of(), SlotSwitch.moves(List.of(), List.of(), 128));
  }

  @Test
  void theReceivingSlotsAreEachSlotAMoveGoesToOnceInSlotOrder() {
    List<Move> moves = List.of(new Move("a", 3, 67), new Move("b", 1, 65), new Move("c", 3, 67), new Move("d", 0, 64));
    assertEquals(List.of(64, 65, 67), List.of(SlotSwitch.receiving(moves)));
    assertEquals(List.of(), List.of(SlotSwitch.receiving(List.of())));
  }

  @Test
  void aGivingSlotLocksItselfAndEverySlotItsDevicesCanGoToInSlotOrder() {
    assertEquals(List.of(3, 67), List.of(SlotSwitch.locked(3, 64, 128)), "doubling: a slot and itself plus the old count");
    assertEquals(List.of(5, 261), List.of(SlotSwitch.locked(5, 256, 512)));
    // 64 -> 96: gcd 32, so slot 40 (c = 40 + 64k) can land on 8, 40 or 72 (c mod 96)
    assertEquals(List.of(8, 40, 72), List.of(SlotSwitch.locked(40, 64, 96)));
    for (int i = 0; i < 5_000; i++) {
      String d = "dev-" + i;
      int from = SlotHash.slotOf(d, 64);
      assertTrue(List.of(SlotSwitch.locked(from, 64, 96)).contains(SlotHash.slotOf(d, 96)), d + " goes to a locked slot");
    }
  }
}
