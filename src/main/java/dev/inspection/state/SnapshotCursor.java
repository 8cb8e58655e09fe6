package dev.inspection.state;

import java.time.Instant;
import java.util.Map;

/**
 * A position in a snapshot's text, for the readers that read a layout character by character ({@link CanonicalSnapshot},
 * {@link CompactSnapshot}): each step either steps over what it expects or leaves the position where it was and says
 * so, and the reader then gives the text up to the general reader.
 */
final class SnapshotCursor {
  /** The first layout's punctuation around the members both layouts hold ({@link #middle}). */
  static final Punctuation V1 = new Punctuation(",\"last_heartbeat_at\":", ",\"rate_window\":{\"window_start\":", ",\"events_count\":",
      ",\"last_event_at\":", "}", ",\"debounce_pending\":{\"since\":", ",\"trigger_threshold\":", "}", ",\"down_since\":",
      ",\"position\":{\"cycle_id\":", ",\"seq\":", "}");
  /** The compact layout's. */
  static final Punctuation COMPACT = new Punctuation(",\"hb\":", ",\"rw\":[", ",", ",", "]", ",\"dp\":[", ",", "]", ",\"ds\":", ",\"p\":[", ",", "]");

  /**
   * What comes before each member (or item) of the part both layouts hold alike, in the order they write it: last
   * heartbeat, rate window [start, events, last event], debounce [since, threshold], down since, position [cycle, seq].
   */
  record Punctuation(String heartbeat, String rateWindow, String rateCount, String rateLast, String rateEnd, String debounce,
      String debounceThreshold, String debounceEnd, String downSince, String position, String positionSeq, String positionEnd) {}

  /** That part as read; each member null when absent. */
  record Middle(Instant heartbeat, DerivedState.RateWindow rateWindow, DerivedState.Debounce debounce, Instant downSince,
      DerivedState.Position position) {}

  final String s;
  int i;

  SnapshotCursor(String s, int at) {
    this.s = s;
    this.i = at;
  }

  /** Steps over {@code text} when it comes next. */
  boolean lit(String text) {
    if (!s.startsWith(text, i)) return false;
    i += text.length();
    return true;
  }

  boolean atEnd() {
    return i == s.length();
  }

  /** A JSON integer as the encoders write a long (an optional minus, no leading zero); {@link Long#MIN_VALUE} for anything else. */
  long number() {
    boolean negative = i < s.length() && s.charAt(i) == '-';
    int start = negative ? i + 1 : i;
    int end = start;
    long v = 0;
    while (end < s.length()) {
      int d = s.charAt(end) - '0';
      if (d < 0 || d > 9) break;
      if (v > (Long.MAX_VALUE - d) / 10) return Long.MIN_VALUE; // beyond a long (and Long.MIN_VALUE itself): the general reader
      v = v * 10 + d;
      end++;
    }
    if (end == start || end - start > 1 && s.charAt(start) == '0') return Long.MIN_VALUE;
    i = end;
    return negative ? -v : v;
  }

  /** After an opening quote: steps over the string and its closing quote, returning where its text ends; -1 for one with an escape or a control character. */
  int string() {
    for (int k = i; k < s.length(); k++) {
      char c = s.charAt(k);
      if (c == '"') {
        i = k + 1;
        return k;
      }
      if (c == '\\' || c < 0x20) return -1;
    }
    return -1;
  }

  /**
   * The members from the last heartbeat to the position, each where {@code p} says and each optional; null when the text
   * departs from that. Equal instants are read as one object ({@code instants}).
   */
  Middle middle(Punctuation p, SnapshotInstants instants) {
    Instant heartbeat = null;
    DerivedState.RateWindow rateWindow = null;
    DerivedState.Debounce debounce = null;
    Instant downSince = null;
    DerivedState.Position position = null;
    if (lit(p.heartbeat()) && (heartbeat = instant(instants)) == null) return null;
    if (lit(p.rateWindow())) {
      Instant start = instant(instants);
      if (start == null || !lit(p.rateCount())) return null;
      long count = number();
      if (count == Long.MIN_VALUE || !lit(p.rateLast())) return null;
      Instant last = instant(instants);
      if (last == null || !lit(p.rateEnd())) return null;
      rateWindow = new DerivedState.RateWindow(start, count, last);
    }
    if (lit(p.debounce())) {
      Instant since = instant(instants);
      if (since == null || !lit(p.debounceThreshold())) return null;
      long threshold = number();
      if (threshold < 0 || threshold > Integer.MAX_VALUE || !lit(p.debounceEnd())) return null;
      debounce = new DerivedState.Debounce(since, (int) threshold);
    }
    if (lit(p.downSince()) && (downSince = instant(instants)) == null) return null;
    if (lit(p.position())) {
      long cycle = number();
      if (cycle == Long.MIN_VALUE || !lit(p.positionSeq())) return null;
      long seq = number();
      if (seq == Long.MIN_VALUE || !lit(p.positionEnd())) return null;
      position = new DerivedState.Position(cycle, seq);
    }
    return new Middle(heartbeat, rateWindow, debounce, downSince, position);
  }

  /**
   * An instant as the encoders write it: quoted ISO text (the first layout's, and the compact one's for an instant with a
   * finer part than the millisecond) or an epoch millisecond; an equal one read before is that object; null if neither.
   */
  Instant instant(SnapshotInstants instants) {
    if (lit("\"")) {
      int start = i;
      int end = string();
      return end < 0 ? null : instants.same(IsoInstant.parse(s, start, end));
    }
    long ms = number();
    return ms == Long.MIN_VALUE ? null : instants.same(Instant.ofEpochMilli(ms));
  }

  /**
   * After {@code {}: the alert keys and their severities up to the closing brace, into {@code firing}; false when the text
   * departs from the encoders' layout (a key that needs escaping included). A severity out of 0..4 is read: the state refuses it.
   */
  boolean firing(Map<String, Integer> firing) {
    if (lit("}")) return true;
    do {
      if (!lit("\"")) return false;
      int start = i;
      int end = string();
      if (end < 0 || !lit(":")) return false;
      long severity = number();
      if (severity == Long.MIN_VALUE) return false;
      firing.put(s.substring(start, end), (int) severity);
    } while (lit(","));
    return lit("}");
  }
}
