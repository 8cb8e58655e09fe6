package dev.inspection.worker;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.state.DerivedState;
import dev.inspection.worker.SnapshotLoader.DeviceMemory;
import dev.inspection.worker.SnapshotLoader.Snapshot;
import io.vertx.core.json.JsonObject;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SlotMemoryTest {

  @Test
  void keepsEachDevicesDerivedStateAndTheMapVersionButNotTheSnapshotsJson() {
    List<WeakReference<JsonObject>> json = new ArrayList<>();
    SlotMemory memory = SlotMemory.of(snapshot(json));

    assertEquals(4, memory.mapVersion());
    assertEquals(100, memory.devices().size(), "one state per device with a snapshot; the device without one starts afresh");
    assertEquals(DerivedState.initial(), memory.devices().get("dev-5"));
    // the JSON the states were read from goes with the snapshot: a slot's owner keeps only the states (about 2,200
    // bytes a device less at a million devices, the bench's lone worker)
    await("every device's snapshot JSON collected while the slot's memory is held").atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(50)).until(() -> {
          System.gc();
          return json.stream().allMatch(r -> r.get() == null);
        });
    assertEquals(100, memory.devices().size());
  }

  @Test
  void aSlotWithoutASnapshotHasNoDeviceAndMapVersionOne() {
    SlotMemory memory = SlotMemory.of(null);
    assertTrue(memory.devices().isEmpty());
    assertEquals(1, memory.mapVersion());
  }

  /** A slot of 100 devices with a derived snapshot and one without; {@code json} gets a weak reference to each snapshot's JSON. */
  private static Snapshot snapshot(List<WeakReference<JsonObject>> json) {
    Map<String, DeviceMemory> devices = new HashMap<>();
    for (int i = 0; i < 100; i++) {
      JsonObject derived = DerivedState.initial().toJson();
      json.add(new WeakReference<>(derived));
      devices.put("dev-" + i, new DeviceMemory(i + 1, 1_000 + i, derived));
    }
    devices.put("dev-new", new DeviceMemory(0, 0, null));
    return new Snapshot(7, devices, 3, 4);
  }
}
