package dev.inspection.worker;

/**
 * How big to make a hash map that is about to receive a known number of entries (Java 19's {@code HashMap.newHashMap}).
 * A takeover fills maps of thousands to a million devices on the worker's event loop, and a map grown by doubling from
 * its default size rehashes everything it holds at each doubling, the last ones inside a single page of the load.
 */
final class HashSizes {
  private HashSizes() {}

  /** The initial capacity at which a map with the default load factor (0.75) holds {@code entries} without a resize. */
  static int capacityFor(int entries) {
    return (int) Math.min(1L << 30, (long) Math.ceil(entries / 0.75));
  }
}
