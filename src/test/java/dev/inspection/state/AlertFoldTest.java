package dev.inspection.state;

import static dev.inspection.state.AlertEvent.FIRING;
import static dev.inspection.state.AlertEvent.RESOLVED;
import static dev.inspection.state.AlertEvent.UPDATED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class AlertFoldTest {
  private static final Instant T = Instant.parse("2026-04-25T10:30:00Z");

  private static AlertEvent ev(String type, int severity, int secondsAfterT, long cycle, long seq) {
    return new AlertEvent("dev_1", DeviceFold.OFFLINE, type, severity, T.plusSeconds(secondsAfterT), cycle, seq,
        new JsonObject().put("n", seq));
  }

  private static AlertCurrent current(AlertEvent... events) {
    return AlertFold.current(List.of(events)).orElseThrow();
  }

  // ---- seed 000 §3.3 ---------------------------------------------------------------------------------

  @Test
  void seedExampleFiringFromTheHighQueueSurvivesANewerEventProcessedBeforeIt() {
    AlertEvent firing = ev(FIRING, 4, 0, 10, 100); // high queue
    AlertEvent newer = ev(UPDATED, 3, 30, 11, 101); // normal queue, processed first
    for (List<AlertEvent> order : List.of(List.of(firing, newer), List.of(newer, firing))) {
      AlertCurrent c = AlertFold.current(order).orElseThrow();
      assertEquals(AlertCurrent.ACTIVE, c.state(), "order " + order);
      assertEquals(4, c.severity(), "the period's maximum, not the latest");
      assertEquals(firing.eventTime(), c.firstFiredAt());
      assertEquals(newer.eventTime(), c.lastEventAt());
      assertEquals(101, c.payload().getInteger("n"));
    }
  }

  @Test
  void seedExampleThroughTheDeviceFoldStaysActiveWhicheverResultArrivesFirst() {
    AlertRules critical = AlertRules.forPriority(1);
    DerivedState twoFailures = Checks.foldAll(DerivedState.initial(), List.of(
        new Check("dev_1", 9, 98, T.minusSeconds(60), false, null),
        new Check("dev_1", 9, 99, T.minusSeconds(30), false, null)), critical).next();
    Check high = new Check("dev_1", 10, 100, T, false, null);
    Check normal = new Check("dev_1", 11, 101, T.plusSeconds(30), false, null);
    for (List<Check> arrival : List.of(List.of(high, normal), List.of(normal, high))) {
      DeviceFold.Result r = Checks.foldAll(twoFailures, arrival, critical);
      AlertCurrent c = AlertFold.current(r.events()).orElseThrow();
      assertEquals(AlertCurrent.ACTIVE, c.state());
      assertEquals(4, c.severity());
      assertEquals(1, r.events().size());
      assertEquals(new DerivedState.Position(11, 101), r.next().position());
    }
  }

  // ---- order ------------------------------------------------------------------------------------------

  @Test
  void tiesInEventTimeAreBrokenByCycleThenSeq() {
    assertEquals(AlertCurrent.ACTIVE, current(ev(RESOLVED, 3, 0, 5, 2), ev(FIRING, 3, 0, 5, 3)).state());
    assertEquals(AlertCurrent.RESOLVED, current(ev(FIRING, 3, 0, 5, 3), ev(RESOLVED, 3, 0, 6, 1)).state());
    assertEquals(AlertCurrent.RESOLVED, current(ev(RESOLVED, 3, 0, 5, 4), ev(FIRING, 3, 0, 5, 3)).state());
    // event_time first: an older time loses even with a larger (cycle, seq)
    assertEquals(AlertCurrent.ACTIVE, current(ev(RESOLVED, 3, 0, 9, 9), ev(FIRING, 3, 1, 1, 1)).state());
  }

  @Test
  void everyPermutationOfSevenEventsGivesTheSameAnswer() {
    Random rnd = new Random(7);
    List<AlertEvent> events = randomEvents(rnd, 7);
    AlertCurrent expected = AlertFold.current(events).orElseThrow();
    int[] count = {0};
    permute(new ArrayList<>(events), 0, p -> {
      assertEquals(expected, AlertFold.current(p).orElseThrow(), "permutation " + p);
      count[0]++;
    });
    assertEquals(5040, count[0]);
  }

  @Test
  void shufflingARandomEventListNeverChangesTheAnswer() {
    Random rnd = new Random(20260425L);
    for (int list = 0; list < 50; list++) {
      List<AlertEvent> events = randomEvents(rnd, 5 + rnd.nextInt(40));
      AlertCurrent expected = AlertFold.current(events).orElseThrow();
      assertEquals(expected, foldInTimeOrder(events), "the sorted fold agrees with a hand-written reading of §3.3");
      for (int shuffle = 0; shuffle < 40; shuffle++) {
        List<AlertEvent> copy = new ArrayList<>(events);
        Collections.shuffle(copy, rnd);
        assertEquals(expected, AlertFold.current(copy).orElseThrow());
      }
    }
  }

  /** Events of one key, with many equal event times so that the (cycle_id, seq) tie-break matters. */
  private static List<AlertEvent> randomEvents(Random rnd, int n) {
    String[] types = {FIRING, UPDATED, RESOLVED};
    List<AlertEvent> out = new ArrayList<>();
    Set<Long> seqs = new HashSet<>();
    while (out.size() < n) {
      long seq = rnd.nextInt(1000);
      if (!seqs.add(seq)) continue; // (cycle_id, seq) is unique per key, as the UNIQUE constraint makes it
      out.add(ev(types[rnd.nextInt(3)], rnd.nextInt(5), rnd.nextInt(6), 1 + seq / 100, seq));
    }
    return out;
  }

  /** §3.3 read directly: the latest event decides the state; severity is the max since the period began. */
  private static AlertCurrent foldInTimeOrder(List<AlertEvent> events) {
    List<AlertEvent> sorted = new ArrayList<>(events);
    sorted.sort((a, b) -> a.eventTime().equals(b.eventTime())
        ? (a.cycleId() != b.cycleId() ? Long.compare(a.cycleId(), b.cycleId()) : Long.compare(a.seq(), b.seq()))
        : a.eventTime().compareTo(b.eventTime()));
    AlertEvent last = sorted.get(sorted.size() - 1);
    int lastOpen = sorted.size() - 1; // the newest FIRING/UPDATED
    while (lastOpen >= 0 && RESOLVED.equals(sorted.get(lastOpen).type())) lastOpen--;
    if (lastOpen < 0) { // only RESOLVED events: the first of them stands for the period
      AlertEvent first = sorted.get(0);
      return new AlertCurrent(last.deviceId(), last.alertKey(), AlertCurrent.RESOLVED, first.severity(), first.eventTime(),
          last.eventTime(), last.payload());
    }
    int start = lastOpen; // the period began after the RESOLVED that precedes it
    while (start > 0 && !RESOLVED.equals(sorted.get(start - 1).type())) start--;
    int max = sorted.subList(start, lastOpen + 1).stream().mapToInt(AlertEvent::severity).max().orElseThrow();
    return new AlertCurrent(last.deviceId(), last.alertKey(), lastOpen == sorted.size() - 1 ? AlertCurrent.ACTIVE : AlertCurrent.RESOLVED,
        max, sorted.get(start).eventTime(), last.eventTime(), last.payload());
  }

  private interface Visit {
    void accept(List<AlertEvent> permutation);
  }

  private static void permute(List<AlertEvent> a, int k, Visit v) {
    if (k == a.size()) {
      v.accept(new ArrayList<>(a));
      return;
    }
    for (int i = k; i < a.size(); i++) {
      Collections.swap(a, k, i);
      permute(a, k + 1, v);
      Collections.swap(a, k, i);
    }
  }

  // ---- periods ----------------------------------------------------------------------------------------

  @Test
  void severityIsTheMaximumOfTheCurrentPeriodOnly() {
    AlertCurrent raised = current(ev(FIRING, 2, 0, 1, 1), ev(UPDATED, 4, 10, 1, 2), ev(UPDATED, 3, 20, 1, 3));
    assertEquals(4, raised.severity());
    assertEquals(T, raised.firstFiredAt());

    AlertCurrent resolved = current(ev(FIRING, 2, 0, 1, 1), ev(UPDATED, 4, 10, 1, 2), ev(RESOLVED, 0, 30, 1, 4));
    assertEquals(AlertCurrent.RESOLVED, resolved.state());
    assertEquals(4, resolved.severity(), "the period it closed");
    assertEquals(T.plusSeconds(30), resolved.lastEventAt());

    AlertCurrent again = current(ev(FIRING, 2, 0, 1, 1), ev(UPDATED, 4, 10, 1, 2), ev(RESOLVED, 0, 30, 1, 4),
        ev(FIRING, 1, 40, 1, 5));
    assertEquals(AlertCurrent.ACTIVE, again.state());
    assertEquals(1, again.severity(), "a new FIRING after a RESOLVED starts a new period");
    assertEquals(T.plusSeconds(40), again.firstFiredAt());
  }

  @Test
  void edgeInputs() {
    assertEquals(Optional.empty(), AlertFold.current(List.of()));
    AlertCurrent lonelyResolve = current(ev(RESOLVED, 2, 5, 1, 1));
    assertEquals(AlertCurrent.RESOLVED, lonelyResolve.state());
    assertEquals(T.plusSeconds(5), lonelyResolve.firstFiredAt());
    AlertEvent other = new AlertEvent("dev_2", DeviceFold.OFFLINE, FIRING, 1, T, 1, 1, null);
    assertThrows(IllegalArgumentException.class, () -> AlertFold.current(List.of(ev(FIRING, 1, 0, 1, 2), other)));
    assertEquals(AlertCurrent.ACTIVE, current(ev(FIRING, 3, 0, 1, 1), ev(FIRING, 3, 0, 1, 1)).state(), "a duplicate is harmless");
  }

  // ---- a day, twice -----------------------------------------------------------------------------------

  /** A day of one-minute checks: long healthy stretches, outages of every length, and a flapping hour. */
  private static List<Check> day(Random rnd) {
    StringBuilder p = new StringBuilder();
    while (p.length() < 1440) {
      p.append("U".repeat(20 + rnd.nextInt(120)));
      p.append("D".repeat(1 + rnd.nextInt(8)));
      if (p.length() > 700 && p.length() < 900) p.append("UD".repeat(30));
    }
    p.setLength(1440);
    return Checks.series("dev_day", p.toString(), Instant.parse("2026-04-25T00:00:00Z"), Duration.ofMinutes(1), 0);
  }

  /** alert_current for every key, as the database would derive it from the rows it holds. */
  private static Map<String, AlertCurrent> currents(Iterable<AlertEvent> rows) {
    Map<String, List<AlertEvent>> byKey = new TreeMap<>();
    for (AlertEvent e : rows) byKey.computeIfAbsent(e.alertKey(), k -> new ArrayList<>()).add(e);
    Map<String, AlertCurrent> out = new TreeMap<>();
    byKey.forEach((k, v) -> out.put(k, AlertFold.current(v).orElseThrow()));
    return out;
  }

  @Test
  void replayingAWholeDayTwiceGivesIdenticalAlerts() {
    AlertRules critical = AlertRules.forPriority(1);
    List<Check> checks = day(new Random(42));
    DeviceFold.Result first = Checks.foldAll(DerivedState.initial(), checks, critical);
    Set<String> types = first.events().stream().map(e -> e.alertKey() + " " + e.type()).collect(Collectors.toSet());
    assertTrue(types.containsAll(Set.of("device.offline FIRING", "device.offline RESOLVED", "device.flapping FIRING",
        "device.flapping RESOLVED")), "the day exercises every rule: " + types);

    // alert_event: INSERT … ON CONFLICT (device_id, alert_key, cycle_id, seq) DO NOTHING
    Map<AlertEvent.Key, AlertEvent> table = new LinkedHashMap<>();
    for (AlertEvent e : first.events()) assertSame(null, table.putIfAbsent(e.uniqueKey(), e), "no key raised twice: " + e);
    Map<String, AlertCurrent> afterOnce = currents(table.values());

    // the same day replayed onto the committed state: nothing is newer, nothing changes
    DeviceFold.Result onTop = Checks.foldAll(first.next(), checks, critical);
    assertEquals(first.next(), onTop.next());
    assertEquals(List.of(), onTop.events());

    // the same day replayed from scratch (e.g. a snapshot lost): the very same rows, ignored by the table
    DeviceFold.Result again = Checks.foldAll(DerivedState.initial(), checks, critical);
    assertEquals(first.events(), again.events());
    assertEquals(first.next(), again.next());
    int before = table.size();
    for (AlertEvent e : again.events()) table.putIfAbsent(e.uniqueKey(), e);
    assertEquals(before, table.size());
    assertEquals(afterOnce, currents(table.values()));
  }

  @Test
  void aDayWithDuplicatesAndLateRedeliveriesRaisesTheSameAlerts() {
    AlertRules normal = AlertRules.forPriority(2);
    Random rnd = new Random(4242);
    List<Check> checks = day(rnd);
    DeviceFold.Result clean = Checks.foldAll(DerivedState.initial(), checks, normal);

    List<Check> delivered = new ArrayList<>();
    List<Check> pending = new ArrayList<>();
    for (Check c : checks) {
      delivered.add(c);
      if (rnd.nextInt(4) == 0) delivered.add(c); // an immediate duplicate
      if (rnd.nextInt(5) == 0) pending.add(c); // redelivered a few results later
      if (!pending.isEmpty() && rnd.nextInt(3) == 0) delivered.add(pending.remove(0));
    }
    delivered.addAll(pending);
    assertTrue(delivered.size() > checks.size() * 1.3);
    DeviceFold.Result messy = Checks.foldAll(DerivedState.initial(), delivered, normal);
    assertEquals(clean.next(), messy.next());
    assertEquals(clean.events(), messy.events());
    assertEquals(currents(clean.events()), currents(messy.events()));
  }
}
