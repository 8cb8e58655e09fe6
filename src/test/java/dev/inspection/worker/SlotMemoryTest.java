package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.state.DerivedState;
import dev.inspection.worker.SnapshotLoader.Snapshot;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SlotMemoryTest {

  @Test
  void keepsTheStateOfEveryDeviceWithOneAndTheSlotMapVersion() {
    Map<String, DerivedState> states = new HashMap<>();
    DerivedState state = DerivedState.fromJson(DerivedState.initial().toJson());
    for (int i = 0; i < 100; i++) states.put("dev-" + i, state);
    // 101 devices: one without a readable snapshot, which the loader left out (its counters start again)
    SlotMemory memory = SlotMemory.of(new Snapshot(7, states, 101, 3, 4, 1, 0));

    assertEquals(4, memory.mapVersion());
    assertEquals(100, memory.devices().size());
    assertSame(state, memory.devices().get("dev-5"));
    assertSame(states, memory.devices(), "the loaded states taken over, not copied");
  }

  @Test
  void aSlotWithoutASnapshotHasNoDeviceAndMapVersionOne() {
    SlotMemory memory = SlotMemory.of(null);
    assertTrue(memory.devices().isEmpty());
    assertEquals(1, memory.mapVersion());
  }
}
