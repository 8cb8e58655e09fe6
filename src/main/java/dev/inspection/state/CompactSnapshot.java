package dev.inspection.state;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The compact layout of a derived snapshot ({@code "v":2}, {@link SnapshotLayout#COMPACT}): what the worker writes for
 * every device of every batch (INV-9) in about a third of the first layout's bytes (a steady UP device: about 170
 * characters against 509). It is still one JSON object, so the {@code json} column checks it and {@code ->>} reads it:
 *
 * <pre>
 * {"v":2,"n":0,"r":"UUUUUDU","a":{"device.flapping":1},"hb":1765000000000,"rw":[1765000000000,12,1765000000000],
 *  "dp":[1765000000000,3],"ds":1765000000000,"p":[1765000000000,4],"h":[-8122474395402,1765000000000]}
 * </pre>
 *
 * {@code n} consecutive failures; {@code r} the ring, oldest first, a letter a result (U, D); {@code a} the alerts
 * firing with their severity (left out when none); {@code hb} last heartbeat; {@code rw} rate window [start, events,
 * last event]; {@code dp} debounce [since, trigger threshold]; {@code ds} down since; {@code p} position [cycle_id,
 * seq]; {@code h} history mark [digest, kept at] when its position is {@code p}, else [cycle_id, seq, digest, kept at].
 * An instant is its epoch millisecond, or its ISO text when it has a finer part (exact either way). What the first
 * layout wrote but the state's invariants decide is left out: the offline phase (UP without failures, SOFT_DOWN with a
 * debounce, HARD_DOWN otherwise), its state type, and flapping (whether {@code device.flapping} fires).
 *
 * <p>{@link #read} reads this layout exactly as {@link #encode} writes it, character by character (no JSON parser: a
 * takeover reads a snapshot for every device it takes), and gives up, returning null, at the first character that
 * departs from it; {@link DerivedJson#decode} then reads the text with its general reader, which reads both layouts in
 * any order and spacing and words what is wrong with a malformed one. Whatever this reads, the general reader reads the
 * same (the tests hold the two equal over long random series and every cut of a snapshot).
 */
final class CompactSnapshot {
  static final int VERSION = 2;
  private static final String START = "{\"v\":2,\"n\":";

  private final SnapshotCursor c;
  private final SnapshotInstants instants = new SnapshotInstants();

  private CompactSnapshot(String s) {
    this.c = new SnapshotCursor(s, START.length());
  }

  static String encode(DerivedState st) {
    StringBuilder b = new StringBuilder(192);
    b.append(START).append(st.consecFailures()).append(",\"r\":\"");
    for (CheckStatus c : st.ring()) b.append(c == CheckStatus.UP ? 'U' : 'D');
    b.append('"');
    if (!st.firing().isEmpty()) {
      b.append(",\"a\":{");
      boolean first = true;
      for (Map.Entry<String, Integer> e : st.firing().entrySet()) {
        if (!first) b.append(',');
        first = false;
        DerivedJson.string(b, e.getKey()).append(':').append(e.getValue().intValue());
      }
      b.append('}');
    }
    if (st.lastHeartbeatAt() != null) instant(b.append(",\"hb\":"), st.lastHeartbeatAt());
    if (st.rateWindow() != null) {
      DerivedState.RateWindow w = st.rateWindow();
      instant(b.append(",\"rw\":["), w.windowStart()).append(',').append(w.eventsCount()).append(',');
      instant(b, w.lastEventAt()).append(']');
    }
    if (st.debouncePending() != null) {
      instant(b.append(",\"dp\":["), st.debouncePending().since()).append(',').append(st.debouncePending().triggerThreshold()).append(']');
    }
    if (st.downSince() != null) instant(b.append(",\"ds\":"), st.downSince());
    DerivedState.Position p = st.position();
    if (p != null) b.append(",\"p\":[").append(p.cycleId()).append(',').append(p.seq()).append(']');
    HistoryMark h = st.history();
    if (h != null) {
      b.append(",\"h\":[");
      if (!h.position().equals(p)) b.append(h.position().cycleId()).append(',').append(h.position().seq()).append(',');
      instant(b.append(h.digest()).append(','), h.keptAt()).append(']');
    }
    return b.append('}').toString();
  }

  /** Its epoch millisecond when that is all of it, else its ISO text (quoted). */
  private static StringBuilder instant(StringBuilder b, Instant t) {
    if (t.getNano() % 1_000_000 == 0) {
      try {
        return b.append(t.toEpochMilli());
      } catch (ArithmeticException beyondALong) {
        // far from any real clock: its text
      }
    }
    return IsoInstant.append(b.append('"'), t).append('"');
  }

  /** The state {@code text} holds when it is in {@link #encode}'s layout and valid; null otherwise. */
  static DerivedState read(String text) {
    if (!text.startsWith(START)) return null;
    try {
      return new CompactSnapshot(text).state();
    } catch (RuntimeException notThisLayout) { // a state's invariant, an instant out of range: the general reader says which
      return null;
    }
  }

  private DerivedState state() {
    long failures = c.number();
    if (failures < 0 || failures > Integer.MAX_VALUE || !c.lit(",\"r\":\"")) return null;
    List<CheckStatus> ring = new ArrayList<>(24);
    for (char ch; c.i < c.s.length() && (ch = c.s.charAt(c.i)) != '"'; c.i++) {
      if (ch == 'U') ring.add(CheckStatus.UP);
      else if (ch == 'D') ring.add(CheckStatus.DOWN);
      else return null;
    }
    if (!c.lit("\"")) return null;
    TreeMap<String, Integer> firing = new TreeMap<>();
    if (c.lit(",\"a\":{") && (!c.firing(firing) || firing.isEmpty())) return null; // none firing: no "a"
    SnapshotCursor.Middle m = c.middle(SnapshotCursor.COMPACT, instants);
    if (m == null) return null;
    DerivedState.Position position = m.position();
    HistoryMark history = null;
    if (c.lit(",\"h\":[")) {
      long[] items = new long[3];
      int n = 0;
      Instant kept;
      while (true) { // numbers up to the one before the closing bracket: that one is the instant kept
        int at = c.i;
        long v = c.number();
        if (v != Long.MIN_VALUE && c.lit(",")) {
          if (n == 3) return null;
          items[n++] = v;
          continue;
        }
        c.i = at;
        kept = c.instant(instants);
        if (kept == null || !c.lit("]")) return null;
        break;
      }
      if (n == 1 && position != null) history = new HistoryMark(position, items[0], kept);
      else if (n == 3) history = new HistoryMark(new DerivedState.Position(items[0], items[1]), items[2], kept);
      else return null;
    }
    if (!c.lit("}") || !c.atEnd()) return null;
    return new DerivedState((int) failures, ring, m.heartbeat(), m.rateWindow(), phase(failures, m.debounce()), m.debounce(), m.downSince(),
        firing.containsKey(DeviceFold.FLAPPING), position, firing, history);
  }

  /** The offline phase the compact layout leaves out, from what decides it (the state's invariants). */
  static OfflinePhase phase(long failures, DerivedState.Debounce debounce) {
    return failures == 0 ? OfflinePhase.UP : debounce != null ? OfflinePhase.SOFT_DOWN : OfflinePhase.HARD_DOWN;
  }
}
