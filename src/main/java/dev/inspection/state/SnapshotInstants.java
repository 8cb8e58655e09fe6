package dev.inspection.state;

import java.time.Instant;

/**
 * The instants of one snapshot being read: an instant equal to one read before is that object. The fold gives a
 * device's newest collected_at to its heartbeat, its rate window's last event and its history mark as one object; read
 * back as one object each, a million devices held 4.0 million instants (96 MB) where the fold's states hold about three,
 * and a takeover's load copied every one of them through the young generation. Both of {@link DerivedJson}'s readers
 * use one per snapshot.
 */
final class SnapshotInstants {
  private final Instant[] seen = new Instant[6]; // a snapshot holds five instants at most
  private int count;

  /** {@code t}, or the equal instant read before. */
  Instant same(Instant t) {
    for (int k = 0; k < count; k++) {
      if (seen[k].equals(t)) return seen[k];
    }
    if (count < seen.length) seen[count++] = t;
    return t;
  }
}
