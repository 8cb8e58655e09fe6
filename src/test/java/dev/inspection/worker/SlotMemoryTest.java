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
  void keepsTheSnapshotOfEveryDeviceWithOneAndTheSlotMapVersion() {
    Map<String, String> snapshots = new HashMap<>();
    String text = DerivedState.initial().toJson().encode();
    for (int i = 0; i < 100; i++) snapshots.put("dev-" + i, text);
    // 101 devices: one without a snapshot yet, which the loader left out
    SlotMemory memory = SlotMemory.of(new Snapshot(7, snapshots, 101, 3, 4, 1, 0));

    assertEquals(4, memory.mapVersion());
    assertEquals(100, memory.snapshots().size());
    assertSame(text, memory.snapshots().get("dev-5"));
    assertSame(snapshots, memory.snapshots(), "the loaded texts taken over, not copied");
  }

  @Test
  void aSnapshotsStatesAreReadFromTheTextsAndAnUnreadableOneIsLeftOut() {
    DerivedState initial = DerivedState.initial();
    Map<String, String> snapshots = new HashMap<>(Map.of("good", initial.toJson().encode(), "bad", "{not json"));
    Map<String, DerivedState> states = new Snapshot(7, snapshots, 2, 3, 4, 1, 0).states();
    assertEquals(Map.of("good", initial), states);
  }

  @Test
  void aSlotWithoutASnapshotHasNoDeviceAndMapVersionOne() {
    SlotMemory memory = SlotMemory.of(null);
    assertTrue(memory.snapshots().isEmpty());
    assertEquals(1, memory.mapVersion());
  }
}
