package dev.inspection.state;

import java.util.Locale;

/**
 * The layout a worker writes its derived snapshots in ({@code worker.snapshot.layout}). Every build since the compact
 * layout reads both; a build before it reads {@link #V1} only and would take a compact snapshot for unreadable (that
 * device's counters would start again), so a rolling upgrade from such a build writes {@link #V1} until no older worker
 * runs.
 */
public enum SnapshotLayout {
  /** {@code "v":1}: the members named in full, the ring as an array of names, instants as ISO text (about 509 characters a steady device). */
  V1 {
    @Override
    public String encode(DerivedState s) {
      return DerivedJson.encode(s);
    }
  },
  /** {@code "v":2} ({@link CompactSnapshot}): about a third of the bytes, a third of the work to write and read. */
  COMPACT {
    @Override
    public String encode(DerivedState s) {
      return CompactSnapshot.encode(s);
    }
  };

  /** The snapshot's text in this layout; {@link DerivedJson#decode} reads it back equal. */
  public abstract String encode(DerivedState s);

  /** {@code compact} or {@code v1} (case ignored); anything else is refused naming the value. */
  public static SnapshotLayout parse(String s) {
    return switch (s.trim().toLowerCase(Locale.ROOT)) {
      case "compact" -> COMPACT;
      case "v1" -> V1;
      default -> throw new IllegalArgumentException("worker.snapshot.layout must be compact or v1, got '" + s + "'");
    };
  }
}
