package dev.inspection.worker;

import dev.inspection.state.DerivedState;
import java.util.Map;

/**
 * What a new owner keeps of a slot's loaded snapshot (INV-10): each device's derived state and the slot map version the
 * slot was switched to. A slot processor that held the loaded snapshot kept every device's parsed JSON for as long as it
 * owned the slot, about 1,900 bytes a device above the derived state itself (the million-device bench's lone worker,
 * README "Benchmark"); the loader now reads each snapshot into its state as the page arrives ({@link SnapshotLoader}).
 */
record SlotMemory(Map<String, DerivedState> devices, long mapVersion) {
  /** A slot with no snapshot: no device yet, map version 1. */
  static final SlotMemory EMPTY = new SlotMemory(Map.of(), 1);

  static SlotMemory of(SnapshotLoader.Snapshot snapshot) {
    return snapshot == null ? EMPTY : new SlotMemory(snapshot.states(), snapshot.mapVersion());
  }
}
