package dev.inspection.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class IsoInstantTest {

  private static Instant random(Random random, int i) {
    long sec = random.nextLong(-62_167_219_200L - 86_400L * 10, 253_402_300_799L + 86_400L * 10);
    int nano = switch (i % 4) {
      case 0 -> 0;
      case 1 -> random.nextInt(1000) * 1_000_000;
      case 2 -> random.nextInt(1_000_000) * 1_000;
      default -> random.nextInt(1_000_000_000);
    };
    return Instant.ofEpochSecond(sec, nano);
  }

  @Test
  void writesWhatInstantToStringWritesAndReadsItBack() {
    List<Instant> edges = List.of(Instant.EPOCH, Instant.parse("0000-01-01T00:00:00Z"), Instant.parse("9999-12-31T23:59:59.999999999Z"),
        Instant.parse("-0001-12-31T23:59:59Z"), Instant.parse("+10000-01-01T00:00:00Z"), Instant.parse("1969-12-31T23:59:59.5Z"),
        Instant.parse("2024-02-29T12:00:00.000001Z"), Instant.parse("2026-12-03T04:05:06.100Z"), Instant.MIN, Instant.MAX);
    for (Instant t : edges) {
      assertEquals(t.toString(), IsoInstant.format(t));
      assertEquals(t, IsoInstant.parse(t.toString()));
    }
    Random random = new Random(5);
    for (int i = 0; i < 200_000; i++) {
      Instant t = random(random, i);
      String text = t.toString();
      assertEquals(text, IsoInstant.format(t));
      assertEquals(t, IsoInstant.parse(text), text);
      assertEquals(t, IsoInstant.parse("x\"" + text + "\",", 2, text.length() + 2), text);
    }
  }

  @Test
  void utcIsTheInstantAtOffsetUtcAndRefusesWhatItRefuses() {
    List<Instant> edges = List.of(Instant.EPOCH, Instant.parse("1969-12-31T23:59:59.5Z"), Instant.parse("2024-02-29T12:00:00.000001Z"),
        Instant.parse("-999999999-01-01T00:00:00Z"), Instant.parse("+999999999-12-31T23:59:59.999999999Z"));
    for (Instant t : edges) assertEquals(t.atOffset(ZoneOffset.UTC), IsoInstant.utc(t), t.toString());
    Random random = new Random(7);
    for (int i = 0; i < 100_000; i++) {
      Instant t = random(random, i);
      assertEquals(t.atOffset(ZoneOffset.UTC), IsoInstant.utc(t), t.toString());
    }
    for (Instant t : List.of(Instant.MIN, Instant.MAX)) {
      assertThrows(DateTimeException.class, () -> t.atOffset(ZoneOffset.UTC));
      assertThrows(DateTimeException.class, () -> IsoInstant.utc(t), "out of OffsetDateTime's range, as atOffset: " + t);
    }
  }

  @Test
  void readsEveryFractionLengthAsTheJdkDoes() {
    String base = "2026-12-03T04:05:06";
    String digits = "123456789";
    for (int len = 0; len <= 9; len++) {
      String text = base + (len == 0 ? "" : "." + digits.substring(0, len)) + "Z";
      assertEquals(Instant.parse(text), IsoInstant.parse(text), text);
    }
  }

  @Test
  void refusesWhatTheJdkRefusesAndReadsTheOddFormsItReads() {
    List<String> texts = List.of("", "2026-12-03", "2026-12-03T04:05:06", "2026-12-03T04:05:06z", "2026-13-03T04:05:06Z",
        "2026-02-30T04:05:06Z", "2025-02-29T00:00:00Z", "2024-02-29T00:00:00Z", "2026-12-03T25:05:06Z", "2026-12-03T04:60:06Z",
        "2026-12-03T04:05:06.Z", "2026-12-03T04:05:06.1234567890Z", "2026-12-03 04:05:06Z", "2026-1a-03T04:05:06Z", "\uff12026-12-03T04:05:06Z",
        "20261-12-03T04:05:06Z", "2026-12-00T04:05:06Z", "2026-12-03T04:05:60Z", "2026-12-03T24:00:00Z", "2026-12-03T04:05:06+01:00",
        "+12026-12-03T04:05:06Z", "2026-12-03T04:05Z", "2026-12-03T04:05:06.5 Z");
    int refused = 0;
    for (String s : texts) {
      Instant jdk;
      try {
        jdk = Instant.parse(s);
      } catch (DateTimeParseException e) {
        refused++;
        assertThrows(DateTimeParseException.class, () -> IsoInstant.parse(s), s);
        assertThrows(DateTimeParseException.class, () -> IsoInstant.parse("\"" + s + "\"", 1, s.length() + 1), "inside quotes: " + s);
        continue;
      }
      assertEquals(jdk, IsoInstant.parse(s), s);
      assertEquals(jdk, IsoInstant.parse("{\"t\":\"" + s + "\"}", 6, s.length() + 6), "inside a text: " + s);
    }
    assertTrue(refused >= 12, "most of these are refused: " + refused);
  }
}
