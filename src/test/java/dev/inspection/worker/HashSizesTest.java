package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class HashSizesTest {

  /** The table HashMap makes for an initial capacity: the next power of two (its tableSizeFor). */
  private static long table(int capacity) {
    return Long.highestOneBit(Math.max(1, capacity - 1)) << 1;
  }

  @Test
  void aMapSizedForItsEntriesHoldsThemWithoutGrowing() {
    for (int entries : new int[] {1, 2, 3, 12, 13, 3_906, 786_432, 786_433, 1_000_000, 1 << 29}) {
      int capacity = HashSizes.capacityFor(entries);
      // a HashMap resizes when its size exceeds table × 0.75
      assertTrue(table(capacity) * 3 / 4 >= entries, entries + " entries fit a table of " + table(capacity));
      assertTrue(table(capacity) * 3 / 8 < entries || entries < 12, entries + " entries: the table is not twice what they need");
    }
    assertEquals(16, table(HashSizes.capacityFor(12)), "twelve entries: the default table of 16");
    assertEquals(2_097_152, table(HashSizes.capacityFor(1_000_000)), "a million: 2^21 slots (8 MB with compressed references)");
    assertEquals(1 << 30, HashSizes.capacityFor(Integer.MAX_VALUE), "capped at the largest table a HashMap makes");
  }
}
