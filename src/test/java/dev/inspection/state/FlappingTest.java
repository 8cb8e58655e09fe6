package dev.inspection.state;

import static dev.inspection.state.CheckStatus.DOWN;
import static dev.inspection.state.CheckStatus.UP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FlappingTest {
  private static final double EPS = 1e-9;
  private static final AlertRules NORMAL = AlertRules.forPriority(2);

  /** A ring of 21 results that changes state exactly at the given transition slots (0 = oldest). */
  private static List<CheckStatus> ringChangingAt(int... slots) {
    List<CheckStatus> ring = new ArrayList<>();
    CheckStatus s = UP;
    ring.add(s);
    for (int k = 0; k < 20; k++) {
      for (int slot : slots) if (slot == k) s = s == UP ? DOWN : UP;
      ring.add(s);
    }
    return ring;
  }

  @Test
  void weightsRiseLinearlyFromPointEightToOnePointTwo() {
    assertEquals(0.8, Flapping.weight(0, 21), EPS);
    assertEquals(0.8 + 0.4 * 10 / 19, Flapping.weight(10, 21), EPS);
    assertEquals(1.2, Flapping.weight(19, 21), EPS);
    double sum = 0;
    for (int k = 0; k < 20; k++) sum += Flapping.weight(k, 21);
    assertEquals(20.0, sum, EPS, "mean weight 1: a change on every result scores 100 %");
  }

  @Test
  void weightedPercentMatchesAHandComputedValue() {
    // changes at the oldest, the 11th and the newest transition:
    // (0.8 + (0.8 + 0.4 * 10 / 19) + 1.2) / 20 * 100 = (2.8 + 4/19) * 5 = 15.052631578947...
    assertEquals(15.052631578947368, Flapping.percentStateChange(ringChangingAt(0, 10, 19), 21), EPS);
    assertEquals(4.0, Flapping.percentStateChange(ringChangingAt(0), 21), EPS, "oldest change: 0.8 / 20");
    assertEquals(6.0, Flapping.percentStateChange(ringChangingAt(19), 21), EPS, "newest change: 1.2 / 20");
    assertEquals(0.0, Flapping.percentStateChange(ringChangingAt(), 21), EPS);
    int[] all = new int[20];
    for (int k = 0; k < 20; k++) all[k] = k;
    assertEquals(100.0, Flapping.percentStateChange(ringChangingAt(all), 21), EPS);
  }

  @Test
  void aShortRingCountsItsTransitionsInTheNewestSlots() {
    assertEquals(6.0, Flapping.percentStateChange(List.of(UP, DOWN), 21), EPS);
    assertEquals(0.0, Flapping.percentStateChange(List.of(DOWN), 21), EPS);
    assertEquals(0.0, Flapping.percentStateChange(List.of(), 21), EPS);
    // 6 changes in slots 14..19: (6 * 0.8 + 0.4 * (14+15+16+17+18+19) / 19) * 5 = 34.421...
    assertEquals((4.8 + 0.4 * 99 / 19) * 5, Flapping.percentStateChange(List.of(UP, DOWN, UP, DOWN, UP, DOWN, UP), 21), EPS);
  }

  @Test
  void anAlternatingDeviceRaisesOneFlappingAlertAndSettlesWhenStable() {
    String alternating = "UD".repeat(20) + "U"; // ends UP, so the stable stretch adds no change
    String pattern = alternating + "U".repeat(30);
    List<Check> checks = Checks.series("d", pattern);
    DeviceFold.Result all = Checks.foldAll(DerivedState.initial(), checks, NORMAL);

    // 7 results hold 6 changes: 34.4 % > 30; 6 results hold 5: 28.9 %, not yet
    assertEquals(List.of(6), Checks.indicesOf(DerivedState.initial(), checks, NORMAL, DeviceFold.FLAPPING, AlertEvent.FIRING));
    // after m stable results the changes sit in slots 0..19-m: m = 14 gives 25.6 % (inside the hysteresis band,
    // still flapping), m = 15 gives (5 * 0.8 + 0.4 * 10 / 19) * 5 = 21.05 % < 25
    int lastChange = alternating.length() - 1;
    assertEquals(List.of(lastChange + 15),
        Checks.indicesOf(DerivedState.initial(), checks, NORMAL, DeviceFold.FLAPPING, AlertEvent.RESOLVED));
    assertEquals(2, all.events().size(), "one FIRING, one RESOLVED, no offline alert: " + all.events());
    assertEquals(1, all.events().get(0).severity());
    assertEquals(checks.get(6).collectedAt(), all.events().get(0).eventTime());
    assertFalse(all.next().flapping());
    assertTrue(all.next().firing().isEmpty());

    DerivedState inBand = Checks.foldAll(DerivedState.initial(), checks.subList(0, lastChange + 15), NORMAL).next();
    double pct = Flapping.percentStateChange(inBand.ring(), 21);
    assertTrue(pct < 30 && pct >= 25, "below the start threshold yet still flapping: " + pct);
    assertTrue(inBand.flapping());
  }

  @Test
  void flappingSuppressesTheOfflineStormThatWouldOtherwiseFire() {
    AlertRules critical = AlertRules.forPriority(1); // offline after 3
    AlertRules noFlapDetection = new AlertRules(3, 4, 100, 100, 21);
    String storm = "DDDU".repeat(25);
    List<Check> checks = Checks.series("d", storm);

    List<Integer> unsuppressed = Checks.indicesOf(DerivedState.initial(), checks, noFlapDetection, DeviceFold.OFFLINE, AlertEvent.FIRING);
    assertEquals(25, unsuppressed.size(), "without flap detection every outage fires");

    List<Integer> flapStart = Checks.indicesOf(DerivedState.initial(), checks, critical, DeviceFold.FLAPPING, AlertEvent.FIRING);
    assertEquals(1, flapStart.size(), "exactly one flapping alert");
    List<Integer> offline = Checks.indicesOf(DerivedState.initial(), checks, critical, DeviceFold.OFFLINE, AlertEvent.FIRING);
    assertTrue(offline.stream().allMatch(i -> i < flapStart.get(0)), "nothing fires offline once flapping: " + offline);
    assertTrue(offline.size() <= 3, "only the outages before flapping was detected: " + offline);
    assertTrue(Checks.foldAll(DerivedState.initial(), checks, critical).next().flapping());
  }

  @Test
  void anOutageHeldBackByFlappingFiresWhenFlappingStops() {
    AlertRules critical = AlertRules.forPriority(1);
    String pattern = "DDDU".repeat(10) + "D".repeat(30) + "U";
    List<Check> checks = Checks.series("d", pattern);
    DeviceFold.Result all = Checks.foldAll(DerivedState.initial(), checks, critical);

    List<Integer> flapEnd = Checks.indicesOf(DerivedState.initial(), checks, critical, DeviceFold.FLAPPING, AlertEvent.RESOLVED);
    assertEquals(1, flapEnd.size());
    List<Integer> offline = Checks.indicesOf(DerivedState.initial(), checks, critical, DeviceFold.OFFLINE, AlertEvent.FIRING);
    assertEquals(flapEnd.get(0), offline.get(offline.size() - 1), "the long outage fires on the check that ends flapping");
    assertTrue(flapEnd.get(0) > 40 + 2, "the long outage had gone HARD long before flapping stopped");
    assertEquals(List.of(pattern.length() - 1),
        Checks.indicesOf(DerivedState.initial(), checks, critical, DeviceFold.OFFLINE, AlertEvent.RESOLVED).stream()
            .filter(i -> i >= 40).toList(), "and resolves on the recovery");
    assertTrue(all.next().firing().isEmpty());
  }
}
