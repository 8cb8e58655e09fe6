package dev.inspection.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Test helper: a character-by-character reader ({@link CanonicalSnapshot}, {@link CompactSnapshot}) reads what the general
 * reader reads or leaves the text to it. Every cut of each text, every character left out, doubled or changed to one of
 * {@code changes}, is either read by the fast reader as the general reader reads it, or left (null) to the general reader.
 */
final class FastReaderCheck {
  private FastReaderCheck() {}

  /** Asserts the above over the variants of {@code texts}, and that at least {@code minRead} were read fast and {@code minLeft} left. */
  static void assertAgrees(Function<String, DerivedState> fast, List<String> texts, char[] changes, int minRead, int minLeft) {
    int read = 0;
    int left = 0;
    for (String text : texts) {
      for (String v : variants(text, changes)) {
        DerivedState quick = fast.apply(v);
        DerivedState general;
        try {
          general = DerivedJson.readAnyLayout(v);
        } catch (IllegalArgumentException refused) {
          assertNull(quick, "the fast reader read what the general one refuses (" + refused.getMessage() + "): " + v);
          left++;
          continue;
        }
        if (quick == null) {
          left++;
        } else {
          assertEquals(general, quick, v);
          read++;
        }
      }
    }
    assertTrue(read > minRead && left > minLeft, read + " variants read by the fast reader, " + left + " left to the general one");
  }

  private static List<String> variants(String text, char[] changes) {
    List<String> variants = new ArrayList<>();
    for (int k = 0; k <= text.length(); k++) variants.add(text.substring(0, k));
    for (int k = 0; k < text.length(); k++) {
      variants.add(text.substring(0, k) + text.substring(k + 1));
      variants.add(text.substring(0, k) + text.charAt(k) + text.substring(k));
      for (char c : changes) variants.add(text.substring(0, k) + c + text.substring(k + 1));
    }
    return variants;
  }
}
