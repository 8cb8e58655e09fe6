package dev.inspection.state;

import java.util.Map;

/**
 * A position in a snapshot's text, for the readers that read a layout character by character ({@link CanonicalSnapshot},
 * {@link CompactSnapshot}): each step either steps over what it expects or leaves the position where it was and says
 * so, and the reader then gives the text up to the general reader.
 */
final class SnapshotCursor {
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
