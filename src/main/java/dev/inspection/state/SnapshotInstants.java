package dev.inspection.state;

import java.time.Instant;

/**
 * The instants of one snapshot being read: an instant whose text was read before, or equal to one read before, is that
 * object. The fold gives a device's newest collected_at to its heartbeat, its rate window's last event and its history
 * mark as one object; read back as one object each, a million devices held 4.0 million instants (96 MB) where the
 * fold's states hold about three, and a takeover's load copied every one of them through the young generation.
 * Both of {@link DerivedJson}'s readers use one per snapshot.
 */
final class SnapshotInstants {
  private static final int KEPT = 6; // a snapshot holds five instants at most
  private final Instant[] instants = new Instant[KEPT];
  private final String[] texts = new String[KEPT];
  private final int[] from = new int[KEPT];
  private final int[] to = new int[KEPT];
  private int seen;

  /** The instant written from {@code start} (inclusive) to {@code end} of {@code s} ({@link IsoInstant#parse}'s refusals). */
  Instant parse(String s, int start, int end) {
    int len = end - start;
    for (int k = 0; k < seen; k++) {
      if (texts[k] != null && to[k] - from[k] == len && s.regionMatches(start, texts[k], from[k], len)) return instants[k];
    }
    return keep(s, start, end, IsoInstant.parse(s, start, end));
  }

  /** {@code t}, or the equal instant read before. */
  Instant same(Instant t) {
    return keep(null, 0, 0, t);
  }

  private Instant keep(String s, int start, int end, Instant t) {
    for (int k = 0; k < seen; k++) {
      if (instants[k].equals(t)) return instants[k];
    }
    if (seen < KEPT) {
      texts[seen] = s;
      from[seen] = start;
      to[seen] = end;
      instants[seen++] = t;
    }
    return t;
  }
}
