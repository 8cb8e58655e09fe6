package dev.inspection.state;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * A derived snapshot read in the one layout {@link DerivedJson#encode} writes (its members in that order, no spacing,
 * no escaped character), character by character and without a JSON parser. A takeover reads a snapshot for every
 * device of every slot it takes (INV-10), and Jackson's parser (its creation, member names, a string for every ring
 * entry) was half of a lone worker's event loop while it took a million devices over (JFR, issue 11).
 *
 * <p>{@link #read} gives up, returning null, at the first character that departs from that layout, and
 * {@link DerivedJson#decode} then reads the text with its general reader, which accepts any order and spacing (a
 * snapshot stored as {@code jsonb} before V013) and words what is wrong with a malformed one. Whatever this reads, the
 * general reader reads the same (the tests hold the two equal over long random series and every cut of a snapshot).
 */
final class CanonicalSnapshot {
  private final SnapshotCursor c;
  private final SnapshotInstants instants = new SnapshotInstants();

  private CanonicalSnapshot(String s) {
    this.c = new SnapshotCursor(s, 0);
  }

  /** The state {@code text} holds when it is in {@link DerivedJson#encode}'s layout and valid; null otherwise. */
  static DerivedState read(String text) {
    try {
      return new CanonicalSnapshot(text).state();
    } catch (RuntimeException notThisLayout) { // a state's invariant, an instant out of range: the general reader says which
      return null;
    }
  }

  private DerivedState state() {
    if (!c.lit("{\"v\":") || c.number() != DerivedState.SNAPSHOT_VERSION) return null;
    if (!c.lit(",\"consec_failure_count\":")) return null;
    long failures = c.number();
    if (failures < 0 || failures > Integer.MAX_VALUE || !c.lit(",\"last_n_states_ring\":[")) return null;
    List<CheckStatus> ring = new ArrayList<>(24);
    if (!c.lit("]")) {
      do {
        if (c.lit("\"UP\"")) ring.add(CheckStatus.UP);
        else if (c.lit("\"DOWN\"")) ring.add(CheckStatus.DOWN);
        else return null;
      } while (c.lit(","));
      if (!c.lit("]")) return null;
    }
    OfflinePhase phase;
    if (c.lit(",\"offline_state\":\"UP\"")) phase = OfflinePhase.UP;
    else if (c.lit(",\"offline_state\":\"SOFT_DOWN\"")) phase = OfflinePhase.SOFT_DOWN;
    else if (c.lit(",\"offline_state\":\"HARD_DOWN\"")) phase = OfflinePhase.HARD_DOWN;
    else return null;
    if (!c.lit(",\"state_type\":\"") || c.string() < 0) return null; // derived from the phase: not read
    boolean flapping;
    if (c.lit(",\"flapping\":true")) flapping = true;
    else if (c.lit(",\"flapping\":false")) flapping = false;
    else return null;
    if (!c.lit(",\"firing\":{")) return null;
    TreeMap<String, Integer> firing = new TreeMap<>();
    if (!c.firing(firing)) return null;
    SnapshotCursor.Middle m = c.middle(SnapshotCursor.V1, instants);
    if (m == null) return null;
    DerivedState.Position position = m.position();
    HistoryMark history = null;
    if (c.lit(",\"history\":[")) {
      long[] items = new long[4];
      for (int k = 0; k < 4; k++) {
        if (k > 0 && !c.lit(",")) return null;
        if ((items[k] = c.number()) == Long.MIN_VALUE) return null;
      }
      if (!c.lit("]")) return null;
      DerivedState.Position at = new DerivedState.Position(items[0], items[1]);
      history = new HistoryMark(at.equals(position) ? position : at, items[2], instants.same(Instant.ofEpochMilli(items[3])));
    }
    if (!c.lit("}") || !c.atEnd()) return null;
    return new DerivedState((int) failures, ring, m.heartbeat(), m.rateWindow(), phase, m.debounce(), m.downSince(), flapping, position, firing,
        history);
  }
}
