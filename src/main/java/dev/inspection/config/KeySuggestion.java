package dev.inspection.config;

/** The known key nearest to a mistyped one (edit distance at most 3), for the start-up error that names it. */
final class KeySuggestion {
  private KeySuggestion() {}

  /** {@code " (did you mean 'x'?)"}, or empty when no known key is close. */
  static String forUnknown(String key) {
    String best = null;
    int bestD = Integer.MAX_VALUE;
    for (String name : Keys.BY_NAME.keySet()) {
      int d = distance(key, name);
      if (d < bestD) {
        bestD = d;
        best = name;
      }
    }
    return best != null && bestD <= 3 ? " (did you mean '" + best + "'?)" : "";
  }

  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) prev[j] = j;
    for (int i = 1; i <= a.length(); i++) {
      int[] cur = new int[b.length() + 1];
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int c = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + c);
      }
      prev = cur;
    }
    return prev[b.length()];
  }
}
