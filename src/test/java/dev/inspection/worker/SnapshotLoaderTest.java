package dev.inspection.worker;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.inspection.state.DerivedState;
import io.vertx.core.json.JsonObject;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SnapshotLoaderTest {

  @Test
  void aStoredSnapshotIsReadIntoItsStateAndAnUnreadableOrMissingOneStartsAgain() {
    DerivedState initial = DerivedState.initial();
    assertEquals(initial, SnapshotLoader.stateOf(3, "d1", initial.toJson().encode()));
    assertNull(SnapshotLoader.stateOf(3, "d2", null), "no snapshot yet");
    assertNull(SnapshotLoader.stateOf(3, "d3", initial.toJson().put("v", 99).encode()), "a layout this build does not know");
    assertNull(SnapshotLoader.stateOf(3, "d4", new JsonObject().put("v", 1).encode()), "fields missing");
    assertNull(SnapshotLoader.stateOf(3, "d5", "not json"), "not JSON");
    assertNull(SnapshotLoader.stateOf(3, "d6", "[1,2]"), "not an object");
  }

  @Test
  void theStatesReadKeepNothingOfTheirJson() {
    // the loader drops each page's snapshot text once read: a state must not hold on to any of it (a million devices'
    // parsed snapshots are about 1.9 GB)
    List<WeakReference<String>> json = new ArrayList<>();
    List<DerivedState> states = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      String stored = DerivedState.initial().toJson().encode();
      json.add(new WeakReference<>(stored));
      states.add(SnapshotLoader.stateOf(1, "dev-" + i, stored));
    }
    await("every snapshot's JSON collected while the states are held").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
        .until(() -> {
          System.gc();
          return json.stream().allMatch(r -> r.get() == null);
        });
    assertEquals(100, states.stream().filter(DerivedState.initial()::equals).count());
  }
}
