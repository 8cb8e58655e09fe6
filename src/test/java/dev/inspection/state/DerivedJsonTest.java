package dev.inspection.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class DerivedJsonTest {

  private static void assertSameText(DerivedState s) {
    String direct = DerivedJson.encode(s);
    assertEquals(s.toJson().encode(), direct);
    assertEquals(s, DerivedJson.decode(direct));
    // the encoder's own layout is read by the canonical reader, but for an escaped alert key (left to the general reader)
    assertEquals(direct.indexOf('\\') < 0 ? s : null, CanonicalSnapshot.read(direct), direct);
    assertEquals(s, DerivedJson.readAnyLayout(direct));
  }

  @Test
  void everyStateOfLongRandomSeriesIsWrittenAsTheJsonTreeWouldBe() {
    Random random = new Random(11);
    int states = 0;
    for (int priority = 1; priority <= 3; priority++) {
      AlertRules rules = AlertRules.forPriority(priority);
      DerivedState s = DerivedState.initial();
      assertSameText(s);
      HistoryMark mark = null;
      for (Check c : Checks.randomSeries("dev-" + priority, random)) {
        s = DeviceFold.apply(s, c, rules).next();
        // the mark keeps milliseconds (its snapshot form), so it is given milliseconds
        mark = HistoryMark.step(mark, new DerivedState.Position(c.cycleId(), c.seq()), c.collectedAt().truncatedTo(ChronoUnit.MILLIS),
            random.nextLong(), Duration.ofMinutes(5)).next();
        s = s.withHistory(mark);
        assertSameText(s);
        states++;
      }
    }
    assertEquals(1200, states);
  }

  /**
   * A state read back holds each instant once, as the fold's own state does: the fold gives the newest collected_at to the
   * heartbeat, the rate window's last event and the history mark as one object, and a takeover's million devices read
   * back with one object each held two instants more a device.
   */
  @Test
  void aStateReadBackHoldsEachInstantOnceAsTheFoldsStateDoes() {
    AlertRules rules = AlertRules.forPriority(2);
    DerivedState s = DerivedState.initial();
    HistoryMark mark = null;
    int shared = 0;
    for (Check c : Checks.series("dev-1", "UUUDDDDUUUUDUUUUUUUUDDDDDDDDUU", Checks.T0, Duration.ofMillis(30_250), 0)) {
      s = DeviceFold.apply(s, c, rules).next();
      mark = HistoryMark.step(mark, new DerivedState.Position(c.cycleId(), c.seq()), c.collectedAt(), c.seq() / 4, Duration.ofMinutes(5)).next();
      s = s.withHistory(mark);
      String text = DerivedJson.encode(s);
      for (DerivedState back : List.of(CanonicalSnapshot.read(text), DerivedJson.readAnyLayout(text), DerivedJson.readAnyLayout(s.toJson().encodePrettily()))) {
        assertEquals(s, back);
        List<Instant> instants = instants(back);
        for (Instant a : instants) {
          for (Instant b : instants) {
            assertTrue(!a.equals(b) || a == b, "after " + c.seq() + " results, " + a + " read back as two objects");
          }
        }
        assertTrue(instants.size() <= instants(s).size());
      }
      if (s.lastHeartbeatAt() != null && s.lastHeartbeatAt().equals(s.rateWindow().lastEventAt())) shared++;
    }
    assertTrue(shared >= 10, "states whose heartbeat is their last event: " + shared);
  }

  /** The state's instants, each object once. */
  private static List<Instant> instants(DerivedState s) {
    Set<Instant> objects = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Instant t : new Instant[] {s.lastHeartbeatAt(), s.downSince(), s.rateWindow() == null ? null : s.rateWindow().windowStart(),
        s.rateWindow() == null ? null : s.rateWindow().lastEventAt(), s.debouncePending() == null ? null : s.debouncePending().since(),
        s.history() == null ? null : s.history().keptAt()}) {
      if (t != null) objects.add(t);
    }
    return new ArrayList<>(objects);
  }

  @Test
  void alertKeysThatNeedEscapingAreEscapedAsTheTreeEscapesThem() {
    TreeMap<String, Integer> firing = new TreeMap<>();
    firing.put("custom.\"quoted\"", 2);
    firing.put("tab\there", 1);
    firing.put("back\\slash\u0001", 4);
    firing.put("unicode.é€", 3);
    DerivedState s = new DerivedState(0, List.of(CheckStatus.UP), Instant.parse("2026-01-02T03:04:05Z"), null, OfflinePhase.UP, null, null,
        false, new DerivedState.Position(5, 6), firing, null);
    assertSameText(s);
  }

  /** A state with every member set: a rate window, a debounce, a position, a history mark, an alert firing. */
  private static DerivedState full() {
    DerivedState s = DerivedState.initial();
    AlertRules rules = AlertRules.forPriority(1);
    for (Check c : Checks.series("d", "UUUDD")) s = DeviceFold.apply(s, c, rules).next();
    s = s.withHistory(new HistoryMark(s.position(), -42L, Instant.parse("2026-12-06T01:02:03.456Z")));
    assertTrue(s.rateWindow() != null && s.debouncePending() != null && s.downSince() != null && s.lastHeartbeatAt() != null, s.toString());
    return s;
  }

  @Test
  void membersInAnyOrderWithAnySpacingAndUnknownOnesReadTheSame() {
    // a snapshot stored as jsonb before V013 comes back with its members reordered and spaced
    DerivedState s = full();
    JsonObject tree = s.toJson();
    List<String> names = new ArrayList<>(tree.fieldNames());
    Collections.reverse(names);
    JsonObject reordered = new JsonObject();
    reordered.put("added_later", new JsonObject().put("nested", new JsonArray().add(1).add(new JsonObject())));
    for (String n : names) reordered.put(n, tree.getValue(n));
    reordered.put("zz_unknown", "x");
    assertEquals(s, DerivedJson.decode(reordered.encodePrettily()));
    assertEquals(s, DerivedJson.decode(reordered.encode()));
  }

  /**
   * The canonical reader reads the encoder's layout alone, and whatever it reads the general reader reads the same: every
   * cut of a snapshot, every character left out, doubled or changed, is either read as the general reader reads it or
   * left to the general reader (which refuses what is malformed, naming it).
   */
  @Test
  void theCanonicalReaderReadsWhatTheGeneralReaderReadsOrLeavesItToIt() {
    JsonObject tree = full().toJson();
    assertNull(CanonicalSnapshot.read(tree.encodePrettily()), "spaced");
    JsonObject reordered = new JsonObject();
    List<String> names = new ArrayList<>(tree.fieldNames());
    Collections.reverse(names);
    for (String n : names) reordered.put(n, tree.getValue(n));
    assertNull(CanonicalSnapshot.read(reordered.encode()), "reordered");
    assertNull(CanonicalSnapshot.read("null"));
    FastReaderCheck.assertAgrees(CanonicalSnapshot::read, List.of(DerivedJson.encode(full()), DerivedJson.encode(DerivedState.initial()),
        DerivedJson.encode(new DerivedState(0, List.of(CheckStatus.UP), Instant.parse("2026-01-02T03:04:05Z"), null, OfflinePhase.UP, null, null,
            false, new DerivedState.Position(5, 6), new TreeMap<>(Map.of("custom.one", 4, "unicode.é€", 0)), null))),
        new char[] {'0', '9', '-', '"', ' ', '\\', 'x', '}', ',', '.'}, 100, 1000);
  }

  @Test
  void aJsonNullIsAnAbsentMemberAndANullSnapshotIsNone() {
    DerivedState s = DerivedState.initial();
    JsonObject tree = s.toJson().putNull("rate_window").putNull("position").putNull("history").putNull("down_since").putNull("last_heartbeat_at");
    assertEquals(s, DerivedJson.decode(tree.encode()));
    assertNull(DerivedJson.decode("null"));
    IllegalArgumentException missing = assertThrows(IllegalArgumentException.class, () -> DerivedJson.decode(s.toJson().putNull("firing").encode()));
    assertTrue(missing.getMessage().contains("firing"), missing.getMessage());
  }

  @Test
  void theLastOfARepeatedMemberIsKept() {
    String good = DerivedJson.encode(DerivedState.initial());
    String twice = "{\"consec_failure_count\":3," + good.substring(1);
    assertEquals(DerivedState.initial(), DerivedJson.decode(twice));
  }

  /** Each malformed snapshot is refused, naming what is wrong. */
  @Test
  void aMalformedSnapshotIsRefusedNamingTheMember() {
    JsonObject good = full().toJson();
    assertEquals(full(), DerivedJson.decode(good.encode()));
    String[][] cases = {
        {"[]", "not a JSON object"},
        {"\"text\"", "not a JSON object"},
        {good.encode().substring(0, 40), "malformed"},
        {"{\"v\":1", "malformed"},
        {without(good, "v"), "version"},
        {with(good, "v", 3), "version"},
        {with(good, "v", "1"), "version"},
        {without(good, "consec_failure_count"), "consec_failure_count"},
        {with(good, "consec_failure_count", "2"), "consec_failure_count"},
        {without(good, "last_n_states_ring"), "last_n_states_ring"},
        {with(good, "last_n_states_ring", "UP"), "last_n_states_ring"},
        {with(good, "last_n_states_ring", new JsonArray().add(1)), "ring entry"},
        {with(good, "last_n_states_ring", new JsonArray().add("SIDEWAYS")), "SIDEWAYS"},
        {without(good, "firing"), "firing"},
        {with(good, "firing", new JsonObject().put("device.offline", "high")), "device.offline"},
        {with(good, "firing", new JsonObject().put("device.custom", 7)), "device.custom"},
        {without(good, "flapping"), "flapping"},
        {with(good, "flapping", "no"), "flapping"},
        {without(good, "offline_state"), "offline state"},
        {with(good, "offline_state", "SIDEWAYS"), "SIDEWAYS"},
        {with(good, "offline_state", 3), "offline_state"},
        {with(good, "last_heartbeat_at", "yesterday"), "yesterday"},
        {with(good, "last_heartbeat_at", ""), "Text ''"},
        {with(good, "down_since", true), "down_since"},
        {with(good, "rate_window", good.getJsonObject("rate_window").copy().put("events_count", "many")), "events_count"},
        {with(good, "rate_window", less(good.getJsonObject("rate_window"), "window_start")), "window_start"},
        {with(good, "rate_window", "now"), "rate_window"},
        {with(good, "debounce_pending", less(good.getJsonObject("debounce_pending"), "since")), "since"},
        {with(good, "debounce_pending", good.getJsonObject("debounce_pending").copy().put("trigger_threshold", 0)), "threshold"},
        {with(good, "position", new JsonObject().put("cycle_id", 1)), "seq"},
        {with(good, "history", new JsonArray().add(1).add(2).add(3)), "history mark"},
        {with(good, "history", new JsonArray().add(1).add(2).add(3).add(4).add(5)), "history mark"},
        {with(good, "history", new JsonArray().add(1).add("2").add(3).add(4)), "history mark item 1"},
        {with(good, "history", new JsonObject()), "history"},
        {with(good, "consec_failure_count", 0), "failure"},
    };
    for (String[] c : cases) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DerivedJson.decode(c[0]), c[0]);
      assertTrue(e.getMessage().contains(c[1]), "refusing " + c[0] + " should name " + c[1] + ", said: " + e.getMessage());
    }
  }

  private static String with(JsonObject j, String key, Object value) {
    return j.copy().put(key, value).encode();
  }

  private static String without(JsonObject j, String key) {
    return less(j, key).encode();
  }

  private static JsonObject less(JsonObject j, String key) {
    JsonObject c = j.copy();
    c.remove(key);
    return c;
  }
}
