package dev.inspection.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AlertRulesTest {

  @Test
  void defaultsPerPriorityFollowTheDesign() {
    assertEquals(new AlertRules(3, 4, 25, 30, 21), AlertRules.forPriority(1));
    assertEquals(new AlertRules(5, 3, 25, 30, 21), AlertRules.forPriority(2));
    assertEquals(new AlertRules(10, 2, 25, 30, 21), AlertRules.forPriority(3));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> AlertRules.forPriority(4));
    assertTrue(e.getMessage().contains("got 4"), e.getMessage());
  }

  @Test
  void configValuesOverrideTheDefaultsOfTheirPriorityOnly() {
    Map<String, String> conf = Map.of(
        "alert.offline.failures.p1", "2",
        "alert.offline.severity.p1", " 3 ",
        "alert.flap.high.pct", "40.5",
        "alert.offline.failures.p3", "");
    assertEquals(new AlertRules(2, 3, 25, 40.5, 21), AlertRules.fromConfig(1, conf::get));
    assertEquals(new AlertRules(5, 3, 25, 40.5, 21), AlertRules.fromConfig(2, conf::get));
    assertEquals(AlertRules.forPriority(3), AlertRules.fromConfig(3, Map.<String, String>of()::get), "blank or unset keeps the default");
  }

  @Test
  void badConfigValuesAreRefusedNamingTheKey() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> AlertRules.fromConfig(2, Map.of("alert.offline.failures.p2", "five")::get));
    assertTrue(e.getMessage().startsWith("alert.offline.failures.p2"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> AlertRules.fromConfig(2, Map.of("alert.flap.low.pct", "40")::get),
        "low above high breaks the hysteresis");
    assertThrows(IllegalArgumentException.class, () -> new AlertRules(0, 3, 25, 30, 21));
    assertThrows(IllegalArgumentException.class, () -> new AlertRules(3, 5, 25, 30, 21));
    assertThrows(IllegalArgumentException.class, () -> new AlertRules(3, 3, 25, 101, 21));
    assertThrows(IllegalArgumentException.class, () -> new AlertRules(3, 3, 25, 30, 2));
  }

  @ParameterizedTest(name = "priority {0}: fires on failure {1} at severity {2}")
  @CsvSource({"1, 3, 4", "2, 5, 3", "3, 10, 2"})
  void offlineFiresOnTheNthConsecutiveFailureOncePerOutage(int priority, int n, int severity) {
    AlertRules rules = AlertRules.forPriority(priority);
    String pattern = "UU" + "D".repeat(2 * n + 3) + "U" + "D".repeat(n) + "UU";
    List<Check> checks = Checks.series("d", pattern);
    DeviceFold.Result all = Checks.foldAll(DerivedState.initial(), checks, rules);

    int firstOutageFires = 2 + n - 1;
    int recovery = 2 + 2 * n + 3;
    int secondOutageFires = recovery + n;
    int secondRecovery = recovery + n + 1;
    assertEquals(List.of(firstOutageFires, secondOutageFires),
        Checks.indicesOf(DerivedState.initial(), checks, rules, DeviceFold.OFFLINE, AlertEvent.FIRING));
    assertEquals(List.of(recovery, secondRecovery),
        Checks.indicesOf(DerivedState.initial(), checks, rules, DeviceFold.OFFLINE, AlertEvent.RESOLVED));
    assertEquals(4, all.events().size());
    for (AlertEvent e : all.events()) assertEquals(severity, e.severity());

    AlertEvent fired = all.events().get(0);
    Check trigger = checks.get(firstOutageFires);
    assertEquals(trigger.collectedAt(), fired.eventTime(), "event time is the check's collected_at");
    assertEquals(trigger.cycleId(), fired.cycleId());
    assertEquals(trigger.seq(), fired.seq());
    assertEquals("DOWN", fired.payload().getJsonObject("check").getString("status"));
    assertTrue(all.next().firing().isEmpty());
  }

  @Test
  void aRecoveryFromASoftDownRaisesNothing() {
    AlertRules rules = AlertRules.forPriority(2);
    DeviceFold.Result r = Checks.foldAll(DerivedState.initial(), Checks.series("d", "UDDDDUDDDDU"), rules);
    assertTrue(r.events().isEmpty());
    assertEquals(OfflinePhase.UP, r.next().offlinePhase());
    assertEquals(0, r.next().consecFailures());
  }

  @Test
  void aThresholdOfOneGoesHardOnTheFirstFailure() {
    AlertRules one = new AlertRules(1, 4, 25, 30, 21);
    DeviceFold.Result r = DeviceFold.apply(DerivedState.initial(), Checks.series("d", "D").get(0), one);
    assertEquals(OfflinePhase.HARD_DOWN, r.next().offlinePhase());
    assertEquals(List.of(AlertEvent.FIRING), r.events().stream().map(AlertEvent::type).toList());
  }

  @Test
  void raisingTheThresholdDuringAHardOutageKeepsItHardAndFiresNoMore() {
    List<Check> checks = Checks.series("d", "DDDDDDU");
    DeviceFold.Result hard = Checks.foldAll(DerivedState.initial(), checks.subList(0, 3), AlertRules.forPriority(1));
    assertEquals(OfflinePhase.HARD_DOWN, hard.next().offlinePhase());
    DeviceFold.Result rest = Checks.foldAll(hard.next(), checks.subList(3, 7), AlertRules.forPriority(3));
    assertEquals(List.of(AlertEvent.RESOLVED), rest.events().stream().map(AlertEvent::type).toList());
    assertEquals(4, rest.events().get(0).severity(), "resolved at the severity it fired with");
  }

  @Test
  void offlinePhaseTransitionsFollowTheTable() {
    Map<OfflinePhase, Set<OfflinePhase>> legal = Map.of(
        OfflinePhase.UP, EnumSet.of(OfflinePhase.SOFT_DOWN, OfflinePhase.HARD_DOWN),
        OfflinePhase.SOFT_DOWN, EnumSet.of(OfflinePhase.HARD_DOWN, OfflinePhase.UP),
        OfflinePhase.HARD_DOWN, EnumSet.of(OfflinePhase.UP));
    for (OfflinePhase from : OfflinePhase.values()) {
      for (OfflinePhase to : OfflinePhase.values()) {
        if (legal.get(from).contains(to)) {
          assertEquals(to, from.transitionTo(to));
        } else {
          assertFalse(from.canMoveTo(to));
          IllegalStateException e = assertThrows(IllegalStateException.class, () -> from.transitionTo(to));
          assertTrue(e.getMessage().startsWith("offline state " + from + " cannot move to " + to), e.getMessage());
        }
      }
    }
  }
}
