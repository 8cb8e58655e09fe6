package dev.inspection.state;

import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/**
 * {@link Instant#toString()} and {@link Instant#parse} without a {@code DateTimeFormatter} for the shape every
 * result and snapshot carries ({@code 2026-12-03T04:05:06.123Z}, years 0000..9999): the probe writes one per result
 * and the worker reads one, and the formatter was about 4 % of the node's CPU at capacity (JFR, issue 11). The text
 * is the same, character for character; anything outside the common shape goes to the JDK's own code, so what
 * it accepts and refuses (and the exception it throws) is exactly {@link Instant#parse}'s.
 */
public final class IsoInstant {
  private static final long FIRST_DAY = -719_528L; // 0000-01-01
  private static final long LAST_DAY = 2_932_896L; // 9999-12-31

  private IsoInstant() {}

  /**
   * {@code t.atOffset(ZoneOffset.UTC)}, the same value, without the {@code ZoneRules} that {@code ZoneOffset.getRules()} builds
   * anew on every call (Java 17): the worker turns several instants of every result into parameters, and that allocation was
   * about 2 % of the event loops' samples at capacity (JFR, issue 11).
   */
  public static OffsetDateTime utc(Instant t) {
    return OffsetDateTime.of(LocalDateTime.ofEpochSecond(t.getEpochSecond(), t.getNano(), ZoneOffset.UTC), ZoneOffset.UTC);
  }

  public static String format(Instant t) {
    return append(new StringBuilder(30), t).toString();
  }

  /** Appends {@code t} as {@link Instant#toString()} writes it. */
  public static StringBuilder append(StringBuilder b, Instant t) {
    long sec = t.getEpochSecond();
    long day = Math.floorDiv(sec, 86_400L);
    if (day < FIRST_DAY || day > LAST_DAY) return b.append(t);
    int secOfDay = (int) Math.floorMod(sec, 86_400L);
    LocalDate d = LocalDate.ofEpochDay(day);
    pad(b, d.getYear(), 4).append('-');
    pad(b, d.getMonthValue(), 2).append('-');
    pad(b, d.getDayOfMonth(), 2).append('T');
    pad(b, secOfDay / 3600, 2).append(':');
    pad(b, secOfDay / 60 % 60, 2).append(':');
    pad(b, secOfDay % 60, 2);
    int nano = t.getNano();
    if (nano != 0) {
      b.append('.');
      if (nano % 1_000_000 == 0) pad(b, nano / 1_000_000, 3);
      else if (nano % 1_000 == 0) pad(b, nano / 1_000, 6);
      else pad(b, nano, 9);
    }
    return b.append('Z');
  }

  /** As {@link Instant#parse}: the same instants from the same texts, and the same exception for any other text. */
  public static Instant parse(CharSequence s) {
    return parse(s, 0, s.length());
  }

  /** {@link #parse(CharSequence)} of the characters {@code from} (inclusive) to {@code to} of {@code s}, without copying them. */
  static Instant parse(CharSequence s, int from, int to) {
    int n = to - from;
    // yyyy-MM-ddTHH:mm:ssZ (20) up to nine fraction digits (30)
    if (n < 20 || n > 30 || s.charAt(from + 4) != '-' || s.charAt(from + 7) != '-' || s.charAt(from + 10) != 'T' || s.charAt(from + 13) != ':'
        || s.charAt(from + 16) != ':' || s.charAt(to - 1) != 'Z') {
      return Instant.parse(s.subSequence(from, to));
    }
    int year = digits(s, from, 4);
    int month = digits(s, from + 5, 2);
    int day = digits(s, from + 8, 2);
    int hour = digits(s, from + 11, 2);
    int minute = digits(s, from + 14, 2);
    int second = digits(s, from + 17, 2);
    int nano = 0;
    if (n > 20) {
      if (s.charAt(from + 19) != '.' || n == 21) return Instant.parse(s.subSequence(from, to));
      int f = digits(s, from + 20, n - 21);
      if (f < 0) return Instant.parse(s.subSequence(from, to));
      nano = f;
      for (int i = n - 21; i < 9; i++) nano *= 10;
    } else if (s.charAt(from + 19) != 'Z') {
      return Instant.parse(s.subSequence(from, to));
    }
    if (year < 0 || month < 1 || month > 12 || day < 1 || day > 28 && day > LocalDate.of(year, month, 1).lengthOfMonth() || hour < 0
        || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
      return Instant.parse(s.subSequence(from, to)); // not a plain instant (or not a date at all): the JDK decides and words the refusal
    }
    long epochDay = LocalDate.of(year, month, day).toEpochDay();
    return Instant.ofEpochSecond(epochDay * 86_400L + hour * 3600L + minute * 60L + second, nano);
  }

  /** The number written by {@code len} ASCII digits at {@code from}; -1 if any is not a digit. */
  private static int digits(CharSequence s, int from, int len) {
    int v = 0;
    for (int i = from; i < from + len; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') return -1;
      v = v * 10 + (c - '0');
    }
    return v;
  }

  private static StringBuilder pad(StringBuilder b, int v, int width) {
    for (int limit = 1, i = 1; i < width; i++) {
      limit *= 10;
      if (v < limit) b.append('0');
    }
    return b.append(v);
  }
}
