package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.state.DerivedState;
import dev.inspection.worker.SnapshotLoader.DeviceMemory;
import dev.inspection.worker.SnapshotLoader.Snapshot;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SlotMemoryTest {

  @Test
  void keepsTheStateOfEveryDeviceWithOneAndTheSlotMapVersion() {
    Map<String, DeviceMemory> devices = new HashMap<>();
    DerivedState state = DerivedState.fromJson(DerivedState.initial().toJson());
    for (int i = 0; i < 100; i++) devices.put("dev-" + i, new DeviceMemory(i + 1, 1_000 + i, state));
    devices.put("dev-new", new DeviceMemory(0, 0, null)); // no snapshot yet, or an unreadable one: its counters start again
    SlotMemory memory = SlotMemory.of(new Snapshot(7, devices, 3, 4));

    assertEquals(4, memory.mapVersion());
    assertEquals(100, memory.devices().size());
    assertSame(state, memory.devices().get("dev-5"));
    assertTrue(!memory.devices().containsKey("dev-new"));
  }

  @Test
  void aSlotWithoutASnapshotHasNoDeviceAndMapVersionOne() {
    SlotMemory memory = SlotMemory.of(null);
    assertTrue(memory.devices().isEmpty());
    assertEquals(1, memory.mapVersion());
  }
}
