package dev.inspection.worker;

import java.util.Map;

/**
 * What a new owner keeps of a slot's loaded snapshot (INV-10): each device's stored derived snapshot, as text, and the
 * slot map version the slot was switched to. The slot's {@link BatchHandler} takes the texts over and reads each into
 * the device's state at its first result ({@link SnapshotLoader}). (A slot processor once kept every device's parsed
 * JSON for as long as it owned the slot, about 1,900 bytes a device above the derived state itself.)
 */
record SlotMemory(Map<String, String> snapshots, long mapVersion) {
  /** A slot with no snapshot: no device yet, map version 1. */
  static final SlotMemory EMPTY = new SlotMemory(Map.of(), 1);

  static SlotMemory of(SnapshotLoader.Snapshot snapshot) {
    return snapshot == null ? EMPTY : new SlotMemory(snapshot.snapshots(), snapshot.mapVersion());
  }
}
