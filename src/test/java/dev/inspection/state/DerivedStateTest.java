package dev.inspection.state;

import static dev.inspection.state.Checks.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DerivedStateTest {

  /** What the worker does at a batch commit and a new owner at takeover: through the text PostgreSQL stores. */
  private static DerivedState throughTheDatabase(DerivedState s) {
    String stored = s.toJson().encode();
    return DerivedState.fromJson(new JsonObject(stored));
  }

  private static void assertRoundTrip(DerivedState s) {
    DerivedState back = throughTheDatabase(s);
    assertEquals(s, back);
    assertEquals(s.toJson(), back.toJson());
  }

  // ---- takeover --------------------------------------------------------------------------------------

  /**
   * Outages shorter than, equal to and longer than the threshold, with long stable stretches so that flap
   * detection stays out of the way (asserted below).
   */
  private static String outages(int n) {
    return "U".repeat(8) + "D".repeat(n - 1) + "U".repeat(12) + "D".repeat(n) + "U".repeat(12) + "D".repeat(n + 4)
        + "U".repeat(12) + "D".repeat(2 * n) + "U".repeat(3);
  }

  /** Where the offline alert must fire, computed from the pattern alone: the Nth failure of each run. */
  private static List<Integer> nthFailures(String pattern, int n) {
    List<Integer> out = new ArrayList<>();
    int run = 0;
    for (int i = 0; i < pattern.length(); i++) {
      run = pattern.charAt(i) == 'D' ? run + 1 : 0;
      if (run == n) out.add(i);
    }
    return out;
  }

  @ParameterizedTest(name = "priority {0}")
  @ValueSource(ints = {1, 2, 3})
  void takeoverAtEverySplitPointContinuesExactlyWhereTheOldOwnerStopped(int priority) {
    AlertRules rules = AlertRules.forPriority(priority);
    int n = rules.offlineAfterFailures();
    String pattern = outages(n);
    List<Check> checks = Checks.series("dev-" + priority, pattern);

    DeviceFold.Result whole = Checks.foldAll(DerivedState.initial(), checks, rules);
    assertTrue(whole.events().stream().noneMatch(e -> e.alertKey().equals(DeviceFold.FLAPPING)), "the pattern must not flap");
    List<Integer> expected = nthFailures(pattern, n);
    assertEquals(3, expected.size(), "one short outage that never confirms, three that do");
    assertEquals(expected, Checks.indicesOf(DerivedState.initial(), checks, rules, DeviceFold.OFFLINE, AlertEvent.FIRING));

    for (int split = 0; split <= checks.size(); split++) {
      DeviceFold.Result before = Checks.foldAll(DerivedState.initial(), checks.subList(0, split), rules);
      DerivedState loaded = throughTheDatabase(before.next());
      assertEquals(before.next(), loaded, "snapshot at " + split);
      DeviceFold.Result after = Checks.foldAll(loaded, checks.subList(split, checks.size()), rules);

      assertEquals(whole.next(), after.next(), "state after a takeover at " + split);
      List<AlertEvent> events = new ArrayList<>(before.events());
      events.addAll(after.events());
      assertEquals(whole.events(), events, "events with a takeover at " + split);
    }
  }

  @Test
  void statesWithNothingFiringShareOneEmptyMapAndAFiringOneKeepsItsOwn() {
    // a worker holds a state per device, nearly all with nothing firing: one shared map, not a TreeMap and wrapper each
    AlertRules rules = AlertRules.forPriority(2); // 5 failures
    DerivedState up = DeviceFold.apply(DerivedState.initial(), Checks.series("a", "U").get(0), rules).next();
    DerivedState read = DerivedState.fromJson(up.toJson());
    assertSame(DerivedState.initial().firing(), up.firing());
    assertSame(up.firing(), read.firing());
    assertEquals(up, read);
    DerivedState s = DerivedState.initial();
    for (Check c : Checks.series("b", "UDDDDD")) s = DeviceFold.apply(s, c, rules).next();
    assertEquals(Map.of(DeviceFold.OFFLINE, 3), s.firing());
    assertThrows(UnsupportedOperationException.class, () -> up.firing().put("x", 1));
    DerivedState firing = s;
    assertThrows(UnsupportedOperationException.class, () -> firing.firing().put("x", 1));
  }

  @Test
  void debounceIsSoftBelowTheThresholdAndHardOnTheNthFailure() {
    AlertRules rules = AlertRules.forPriority(2); // 5 failures
    List<Check> checks = Checks.series("d", "UDDDDD");
    DerivedState s = DerivedState.initial();
    for (int i = 0; i < 5; i++) {
      DeviceFold.Result r = DeviceFold.apply(s, checks.get(i), rules);
      s = throughTheDatabase(r.next());
      assertTrue(r.events().isEmpty(), "no event before the 5th failure, check " + i);
    }
    assertEquals(OfflinePhase.SOFT_DOWN, s.offlinePhase());
    assertEquals("SOFT", s.stateType());
    assertEquals(4, s.consecFailures());
    assertEquals(new DerivedState.Debounce(checks.get(1).collectedAt(), 5), s.debouncePending());

    DeviceFold.Result fifth = DeviceFold.apply(s, checks.get(5), rules);
    assertEquals(OfflinePhase.HARD_DOWN, fifth.next().offlinePhase());
    assertEquals("HARD", fifth.next().stateType());
    assertNull(fifth.next().debouncePending());
    assertEquals(checks.get(1).collectedAt(), fifth.next().downSince());
    assertEquals(1, fifth.events().size());
    AlertEvent e = fifth.events().get(0);
    assertEquals(new AlertEvent("d", DeviceFold.OFFLINE, AlertEvent.FIRING, 3, checks.get(5).collectedAt(), 1, 6, e.payload()), e);
    assertEquals(5, e.payload().getInteger("consec_failures"));
    assertEquals(checks.get(0).collectedAt().toString(), e.payload().getString("last_heartbeat_at"));
  }

  // ---- older results ---------------------------------------------------------------------------------

  @Test
  void aCheckNotNewerThanThePositionChangesNothing() {
    AlertRules rules = AlertRules.forPriority(1);
    DerivedState s = Checks.foldAll(DerivedState.initial(), Checks.series("d", "UUDD"), rules).next();
    assertEquals(new DerivedState.Position(1, 4), s.position());

    Instant later = T0.plus(Duration.ofHours(1)); // a late redelivery: newer clock, older position
    for (Check old : List.of(
        new Check("d", 1, 3, later, false, null), // older seq, same cycle
        new Check("d", 1, 4, later, false, null), // the same position again (a duplicate)
        new Check("d", 0, 99, later, false, null), // older cycle, larger seq
        new Check("d", 1, 1, later, true, null))) {
      DeviceFold.Result r = DeviceFold.apply(s, old, rules);
      assertSame(s, r.next(), "state untouched by " + old.position());
      assertTrue(r.events().isEmpty());
    }
    // the third failure of a critical device would fire; only a newer position counts
    DeviceFold.Result newer = DeviceFold.apply(s, new Check("d", 2, 1, later, false, null), rules);
    assertEquals(3, newer.next().consecFailures());
    assertEquals(1, newer.events().size());
  }

  // ---- JSON ------------------------------------------------------------------------------------------

  @Test
  void initialStateWithAnEmptyRingRoundTrips() {
    DerivedState s = DerivedState.initial();
    assertTrue(s.ring().isEmpty());
    assertRoundTrip(s);
    JsonObject j = s.toJson();
    assertEquals(List.of(), j.getJsonArray("last_n_states_ring").getList());
    assertEquals("UP", j.getString("offline_state"));
    assertEquals(s, DerivedState.fromJson(null), "a row without a snapshot starts from the initial state");
  }

  @Test
  void fullRingFlappingAndHardDownRoundTrips() {
    List<CheckStatus> ring = new ArrayList<>();
    for (int i = 0; i < 21; i++) ring.add(i % 3 == 0 ? CheckStatus.UP : CheckStatus.DOWN);
    TreeMap<String, Integer> firing = new TreeMap<>(Map.of(DeviceFold.OFFLINE, 4, DeviceFold.FLAPPING, 1));
    Instant nanos = Instant.parse("2026-04-25T10:29:50.123456789Z");
    DerivedState s = new DerivedState(7, ring, nanos,
        new DerivedState.RateWindow(Instant.parse("2026-04-25T10:25:00Z"), 142, Instant.parse("2026-04-25T10:29:58Z")),
        OfflinePhase.HARD_DOWN, null, Instant.parse("2026-04-25T10:20:00.5Z"), true,
        new DerivedState.Position(Long.MAX_VALUE, Long.MAX_VALUE - 1), firing,
        new HistoryMark(new DerivedState.Position(Long.MAX_VALUE, Long.MAX_VALUE - 1), Long.MIN_VALUE + 3, Instant.parse("2026-04-25T10:29:00.123Z")));
    assertRoundTrip(s);
    assertEquals(4, s.toJson().getJsonArray("history").size(), "the history mark is a compact array");
    assertEquals(21, s.toJson().getJsonArray("last_n_states_ring").size());
    assertEquals("UP", s.toJson().getJsonArray("last_n_states_ring").getString(0), "oldest first");
  }

  @Test
  void softDownWithDebouncePendingRoundTrips() {
    DerivedState s = Checks.foldAll(DerivedState.initial(), Checks.series("d", "UUUDD"), AlertRules.forPriority(3)).next();
    assertEquals(OfflinePhase.SOFT_DOWN, s.offlinePhase());
    assertRoundTrip(s);
    JsonObject dp = s.toJson().getJsonObject("debounce_pending");
    assertEquals(10, dp.getInteger("trigger_threshold"));
    assertEquals(T0.plus(Duration.ofMinutes(3)).toString(), dp.getString("since"));
    assertEquals(2, s.toJson().getInteger("consec_failure_count"));
  }

  @Test
  void everyStateAlongALongRunRoundTrips() {
    AlertRules rules = AlertRules.forPriority(1);
    DerivedState s = DerivedState.initial();
    for (Check c : Checks.series("d", "UDUDUDUDDDDUUUDDDDDDUUUUUUUUUUUUUUUUUUUUUUUUUUU" + "D".repeat(30))) {
      s = DeviceFold.apply(s, c, rules).next();
      assertRoundTrip(s);
      assertTrue(s.ring().size() <= 21);
    }
  }

  @Test
  void aCorruptOrUnknownSnapshotIsRefusedNamingTheProblem() {
    JsonObject good = DerivedState.initial().toJson();
    IllegalArgumentException v = assertThrows(IllegalArgumentException.class,
        () -> DerivedState.fromJson(good.copy().put("v", 3)));
    assertTrue(v.getMessage().contains("version"), v.getMessage());
    IllegalArgumentException upWithFailures = assertThrows(IllegalArgumentException.class,
        () -> DerivedState.fromJson(good.copy().put("consec_failure_count", 2)));
    assertTrue(upWithFailures.getMessage().contains("UP"), upWithFailures.getMessage());
    assertThrows(IllegalArgumentException.class, () -> DerivedState.fromJson(good.copy().put("last_heartbeat_at", "yesterday")));
    JsonObject noFiring = good.copy();
    noFiring.remove("firing");
    assertThrows(IllegalArgumentException.class, () -> DerivedState.fromJson(noFiring));
    JsonObject noRing = good.copy();
    noRing.remove("last_n_states_ring");
    assertThrows(IllegalArgumentException.class, () -> DerivedState.fromJson(noRing));
    JsonObject flappingWithoutAlert = good.copy().put("flapping", true);
    assertThrows(IllegalArgumentException.class, () -> DerivedState.fromJson(flappingWithoutAlert));
    JsonObject badRing = good.copy().put("last_n_states_ring", new JsonArray().add("SIDEWAYS"));
    assertThrows(IllegalArgumentException.class, () -> DerivedState.fromJson(badRing));
  }

  // ---- heartbeat and rate window ---------------------------------------------------------------------

  @Test
  void heartbeatIsTheCollectionTimeOfTheNewestUp() {
    List<Check> checks = Checks.series("d", "UUDD");
    DerivedState s = Checks.foldAll(DerivedState.initial(), checks, AlertRules.forPriority(2)).next();
    assertEquals(checks.get(1).collectedAt(), s.lastHeartbeatAt());
    assertNull(Checks.foldAll(DerivedState.initial(), Checks.series("d", "DD"), AlertRules.forPriority(2)).next().lastHeartbeatAt());
  }

  @Test
  void rateWindowCountsResultsPerEpochAlignedWindow() {
    AlertRules rules = AlertRules.forPriority(2);
    Instant[] at = {
        Instant.parse("2026-04-25T10:24:59Z"),
        Instant.parse("2026-04-25T10:25:00Z"),
        Instant.parse("2026-04-25T10:27:10Z"),
        Instant.parse("2026-04-25T10:29:58Z"),
        Instant.parse("2026-04-25T10:26:00Z"), // the probe's clock stepped back: still this window, last stays
    };
    DerivedState s = DerivedState.initial();
    for (int i = 0; i < at.length; i++) s = DeviceFold.apply(s, new Check("d", 1, i + 1, at[i], true, null), rules).next();
    assertEquals(new DerivedState.RateWindow(Instant.parse("2026-04-25T10:25:00Z"), 4, Instant.parse("2026-04-25T10:29:58Z")),
        s.rateWindow());
    s = DeviceFold.apply(s, new Check("d", 1, 9, Instant.parse("2026-04-25T10:30:00Z"), true, null), rules).next();
    assertEquals(new DerivedState.RateWindow(Instant.parse("2026-04-25T10:30:00Z"), 1, Instant.parse("2026-04-25T10:30:00Z")),
        s.rateWindow());
    DerivedState oneMinute = DeviceFold.apply(DerivedState.initial(), new Check("d", 1, 1, at[2], true, null), rules,
        Duration.ofMinutes(1)).next();
    assertEquals(Instant.parse("2026-04-25T10:27:00Z"), oneMinute.rateWindow().windowStart());
  }

  @Test
  void theRingKeepsOnlyTheLastWindowOfResults() {
    DerivedState s = Checks.foldAll(DerivedState.initial(), Checks.series("d", "D".repeat(5) + "U".repeat(25)),
        AlertRules.forPriority(2)).next();
    assertEquals(Collections.nCopies(21, CheckStatus.UP), s.ring());
  }
}
