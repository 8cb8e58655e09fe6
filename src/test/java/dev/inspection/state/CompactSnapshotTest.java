package dev.inspection.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The compact snapshot layout ({@code "v":2}): written, read back equal by both readers, smaller, and refused when malformed. */
class CompactSnapshotTest {

  private static void assertReadBack(DerivedState s) {
    String text = SnapshotLayout.COMPACT.encode(s);
    assertEquals(s, DerivedJson.decode(text), text);
    // the fast reader reads the encoder's layout, but for an escaped alert key (left to the general reader)
    assertEquals(text.indexOf('\\') < 0 ? s : null, CompactSnapshot.read(text), text);
    assertEquals(s, DerivedJson.readAnyLayout(text), text);
    assertEquals(s, DerivedJson.readAnyLayout(new JsonObject(text).encodePrettily()), "spaced: " + text);
    assertNull(CanonicalSnapshot.read(text), "the first layout's reader leaves it alone");
  }

  /** A fold's states over long random series, with a history mark at every step; instants with millis, micros and nanos. */
  private static List<DerivedState> series(long seed) {
    Random random = new Random(seed);
    List<DerivedState> states = new ArrayList<>();
    for (int priority = 1; priority <= 3; priority++) {
      AlertRules rules = AlertRules.forPriority(priority);
      DerivedState s = DerivedState.initial();
      states.add(s);
      HistoryMark mark = null;
      for (Check c : Checks.randomSeries("dev-" + priority, random)) {
        s = DeviceFold.apply(s, c, rules).next();
        // now and then the mark lags the position (a result that did not feed the state), and keeps a finer instant
        DerivedState.Position at = random.nextInt(5) == 0 ? new DerivedState.Position(c.cycleId(), c.seq() + 1) : s.position();
        mark = HistoryMark.step(mark, at, c.collectedAt(), random.nextLong(), Duration.ofMinutes(5)).next();
        s = s.withHistory(mark.position().equals(s.position()) ? new HistoryMark(s.position(), mark.digest(), mark.keptAt()) : mark);
        states.add(s);
      }
    }
    return states;
  }

  @Test
  void everyStateOfLongRandomSeriesIsReadBackEqualByBothReaders() {
    List<DerivedState> states = series(11);
    states.forEach(CompactSnapshotTest::assertReadBack);
    assertEquals(1203, states.size());
    assertTrue(states.stream().anyMatch(s -> s.offlinePhase() == OfflinePhase.SOFT_DOWN), "a debounce among the states");
    assertTrue(states.stream().anyMatch(s -> s.offlinePhase() == OfflinePhase.HARD_DOWN), "a confirmed failure among the states");
    assertTrue(states.stream().anyMatch(DerivedState::flapping), "flapping among the states");
    assertTrue(states.stream().anyMatch(s -> s.history() != null && !s.history().position().equals(s.position())), "a mark apart from the position");
  }

  /**
   * Each layout's text reads back as the same state: a snapshot written by a worker of either setting is read by any. (The
   * first layout keeps a history mark's instant to the millisecond, so the marks here are whole milliseconds.)
   */
  @Test
  void bothLayoutsOfAStateReadBackAsTheSameState() {
    for (DerivedState s : series(5)) {
      HistoryMark h = s.history();
      DerivedState ms = h == null ? s : s.withHistory(new HistoryMark(h.position(), h.digest(), h.keptAt().truncatedTo(ChronoUnit.MILLIS)));
      assertEquals(ms, DerivedJson.decode(SnapshotLayout.V1.encode(ms)));
      assertEquals(ms, DerivedJson.decode(SnapshotLayout.COMPACT.encode(ms)));
    }
  }

  @Test
  void aSteadyDeviceIsAThirdOfTheFirstLayout() {
    AlertRules rules = AlertRules.forPriority(2);
    DerivedState s = DerivedState.initial();
    HistoryMark mark = null;
    for (Check c : Checks.series("dev-1", "U".repeat(40), Checks.T0, Duration.ofSeconds(5), 0)) {
      s = DeviceFold.apply(s, c, rules).next();
      mark = HistoryMark.step(mark, s.position(), c.collectedAt(), -8_122_474_395_402_113_911L, Duration.ofMinutes(15)).next();
      s = s.withHistory(new HistoryMark(s.position(), mark.digest(), mark.keptAt()));
    }
    String compact = SnapshotLayout.COMPACT.encode(s);
    String v1 = SnapshotLayout.V1.encode(s);
    assertEquals(21, s.ring().size());
    assertTrue(compact.length() * 3 < v1.length() + 30 && compact.length() < 180, compact.length() + " against " + v1.length() + ": " + compact);
    assertEquals(0, new JsonObject(compact).getInteger("n"), "->> reads it: " + compact);
  }

  /** The instants of a state read back are one object where the state's are one (a takeover of a million devices). */
  @Test
  void anInstantWrittenTwiceIsReadBackAsOneObject() {
    DerivedState s = series(3).stream().skip(10).filter(x -> x.lastHeartbeatAt() != null && x.lastHeartbeatAt() == x.rateWindow().lastEventAt())
        .findFirst().orElseThrow(() -> new AssertionError("the fold shares its newest instant"));
    for (DerivedState back : List.of(CompactSnapshot.read(CompactSnapshot.encode(s)), DerivedJson.readAnyLayout(CompactSnapshot.encode(s)))) {
      assertSame(back.lastHeartbeatAt(), back.rateWindow().lastEventAt());
    }
  }

  @Test
  void anInstantWithAFinerPartIsWrittenAsTextAndReadBackExactly() {
    Instant micros = Instant.parse("2026-12-06T01:02:03.456789Z");
    Instant nanos = Instant.parse("1969-12-31T23:59:59.999999999Z");
    Instant beforeEpoch = Instant.parse("1960-01-01T00:00:00.001Z");
    DerivedState s = new DerivedState(0, List.of(CheckStatus.UP), micros, new DerivedState.RateWindow(beforeEpoch, 3, nanos), OfflinePhase.UP,
        null, null, false, new DerivedState.Position(-1, 0), new TreeMap<>(), new HistoryMark(new DerivedState.Position(7, 8), 0, Instant.MAX));
    String text = CompactSnapshot.encode(s);
    assertTrue(text.contains("\"hb\":\"2026-12-06T01:02:03.456789Z\"") && text.contains("[-315619199999,3,\"1969-12-31T23:59:59.999999999Z\"]"), text);
    assertReadBack(s);
  }

  @Test
  void alertKeysThatNeedEscapingAreReadBackByTheGeneralReader() {
    TreeMap<String, Integer> firing = new TreeMap<>(Map.of("custom.\"quoted\"", 2, "tab\there", 1, "back\\slash\u0001", 4, "unicode.é€", 3));
    assertReadBack(new DerivedState(0, List.of(CheckStatus.UP), null, null, OfflinePhase.UP, null, null, false, null, firing, null));
  }

  /**
   * The fast reader reads the encoder's layout alone, and whatever it reads the general reader reads the same: every cut of
   * a snapshot, every character left out, doubled or changed, is either read as the general reader reads it or left to it.
   */
  @Test
  void theFastReaderReadsWhatTheGeneralReaderReadsOrLeavesItToIt() {
    List<DerivedState> all = series(7);
    FastReaderCheck.assertAgrees(CompactSnapshot::read, List.of(0, 30, 150, 399, 700, 1100).stream().map(k -> CompactSnapshot.encode(all.get(k))).toList(),
        new char[] {'0', '9', '-', '"', ' ', '\\', 'U', 'D', 'x', '}', ']', ',', '.'}, 100, 1000);
  }

  /** Each malformed compact snapshot is refused, naming what is wrong. */
  @Test
  void aMalformedCompactSnapshotIsRefusedNamingTheMember() {
    DerivedState full = series(11).stream().filter(s -> s.debouncePending() != null && s.history() != null).findFirst().orElseThrow();
    JsonObject good = new JsonObject(CompactSnapshot.encode(full));
    assertEquals(full, DerivedJson.decode(good.encode()));
    String[][] cases = {
        {with(good, "v", 3), "version"},
        {with(good, "v", 2.5), "version"},
        {without(good, "n"), "n (consecutive failures)"},
        {with(good, "n", "2"), "n (consecutive failures)"},
        {without(good, "r"), "r (the ring)"},
        {with(good, "r", "UUXU"), "ring entry 'X'"},
        {with(good, "r", new JsonArray().add("UP")), "r is not a string"},
        {with(good, "a", new JsonObject().put("device.custom", 7)), "device.custom"},
        {with(good, "hb", "yesterday"), "yesterday"},
        {with(good, "hb", 1.5), "hb"},
        {with(good, "rw", new JsonArray().add(1).add(2)), "rw must be [window_start, events_count, last_event_at], got 2 items"},
        {with(good, "rw", new JsonArray().add(1).add("many").add(3)), "rw item 1 is not a whole number"},
        {with(good, "rw", new JsonArray().add(1).add(true).add(3)), "rw item 1"},
        {with(good, "rw", new JsonObject()), "rw is not an array"},
        {with(good, "dp", new JsonArray().add(1).add(0)), "threshold"},
        {with(good, "dp", new JsonArray().add(1).add(3_000_000_000L)), "beyond an int"},
        {with(good, "p", new JsonArray().add(1)), "p must be [cycle_id, seq]"},
        {with(good, "h", new JsonArray().add(1).add(2).add(3)), "h must be [digest, kept_at] or [cycle_id, seq, digest, kept_at]"},
        {with(without(good, "p"), "h", new JsonArray().add(1).add(2)), "needs a position (p)"},
        {with(good, "n", 0), "UP device"},
    };
    for (String[] c : cases) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DerivedJson.decode(c[0]), c[0]);
      assertTrue(e.getMessage().contains(c[1]), "refusing " + c[0] + " should name " + c[1] + ", said: " + e.getMessage());
    }
  }

  @Test
  void theLayoutIsNamedCompactOrV1() {
    assertEquals(SnapshotLayout.COMPACT, SnapshotLayout.parse("compact"));
    assertEquals(SnapshotLayout.V1, SnapshotLayout.parse(" V1 "));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SnapshotLayout.parse("v2"));
    assertTrue(e.getMessage().contains("worker.snapshot.layout must be compact or v1, got 'v2'"), e.getMessage());
  }

  private static String with(JsonObject j, String key, Object value) {
    return j.copy().put(key, value).encode();
  }

  private static String with(String j, String key, Object value) {
    return with(new JsonObject(j), key, value);
  }

  private static String without(JsonObject j, String key) {
    JsonObject c = j.copy();
    c.remove(key);
    return c.encode();
  }
}
