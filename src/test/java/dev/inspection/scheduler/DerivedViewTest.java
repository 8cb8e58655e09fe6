package dev.inspection.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.state.DerivedState;
import dev.inspection.state.SnapshotLayout;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/** The device API's view of a stored derived snapshot ({@link DeviceStore#derived}): the same, whatever layout holds it. */
class DerivedViewTest {
  @Test
  void bothLayoutsAreShownWithTheirMembersNamedInFullAndAnUnreadableOneSaysWhy() {
    DerivedState s = DerivedState.initial();
    JsonObject full = s.toJson();
    assertEquals(full, DeviceStore.derived(SnapshotLayout.COMPACT.encode(s)));
    assertEquals(full, DeviceStore.derived(SnapshotLayout.V1.encode(s)));
    assertEquals("UP", DeviceStore.derived(SnapshotLayout.COMPACT.encode(s)).getString("offline_state"));
    assertNull(DeviceStore.derived(null), "no snapshot yet");
    assertNull(DeviceStore.derived("null"));
    JsonObject bad = DeviceStore.derived("{\"v\":2,\"n\":0,\"r\":\"UXU\"}");
    assertTrue(bad.getString("unreadable").contains("ring entry 'X'"), bad.encode());
    assertEquals("{\"v\":2,\"n\":0,\"r\":\"UXU\"}", bad.getString("stored"));
  }
}
