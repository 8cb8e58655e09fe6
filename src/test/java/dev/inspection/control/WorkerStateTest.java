package dev.inspection.control;

import static dev.inspection.control.WorkerState.ACTIVE;
import static dev.inspection.control.WorkerState.DEAD;
import static dev.inspection.control.WorkerState.DRAINING;
import static dev.inspection.control.WorkerState.OFFLINE;
import static dev.inspection.control.WorkerState.QUARANTINE;
import static dev.inspection.control.WorkerState.REGISTERED;
import static dev.inspection.control.WorkerState.SUSPECTED;
import static dev.inspection.control.WorkerState.WARMING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class WorkerStateTest {
  /** The design's table, written out again here so that a slip in the enum cannot agree with itself. */
  private static final Map<WorkerState, Set<WorkerState>> LEGAL = Map.of(
      REGISTERED, EnumSet.of(WARMING, DRAINING, OFFLINE, DEAD),
      WARMING, EnumSet.of(ACTIVE, DRAINING, OFFLINE, DEAD),
      ACTIVE, EnumSet.of(DRAINING, SUSPECTED, DEAD, OFFLINE),
      DRAINING, EnumSet.of(OFFLINE, DEAD),
      SUSPECTED, EnumSet.of(ACTIVE, DEAD, DRAINING, OFFLINE),
      DEAD, EnumSet.of(QUARANTINE, OFFLINE, REGISTERED),
      QUARANTINE, EnumSet.of(WARMING, DEAD, OFFLINE, DRAINING),
      OFFLINE, EnumSet.of(REGISTERED));

  @Test
  void everyLegalTransitionIsAccepted() {
    int accepted = 0;
    for (Map.Entry<WorkerState, Set<WorkerState>> e : LEGAL.entrySet()) {
      for (WorkerState next : e.getValue()) {
        assertTrue(e.getKey().canMoveTo(next), e.getKey() + " -> " + next);
        assertEquals(next, e.getKey().transitionTo(next));
        accepted++;
      }
    }
    assertEquals(26, accepted);
  }

  @Test
  void everyPairOutsideTheTableIsRefusedNamingBothStates() {
    assertEquals(EnumSet.allOf(WorkerState.class), LEGAL.keySet(), "table covers every state");
    int refused = 0;
    for (WorkerState from : WorkerState.values()) {
      for (WorkerState to : WorkerState.values()) {
        if (LEGAL.get(from).contains(to)) continue;
        assertFalse(from.canMoveTo(to), from + " -> " + to);
        IllegalStateTransition e = assertThrows(IllegalStateTransition.class, () -> from.transitionTo(to));
        assertTrue(e.getMessage().startsWith("worker state " + from + " cannot move to " + to + " (legal: "),
            e.getMessage());
        refused++;
      }
    }
    assertEquals(64 - 26, refused);
  }

  @ParameterizedTest(name = "{0} -> {1} is illegal")
  @CsvSource({
      "DEAD, ACTIVE", "DEAD, WARMING", "DEAD, SUSPECTED", "OFFLINE, ACTIVE", "OFFLINE, WARMING",
      "REGISTERED, ACTIVE", "WARMING, SUSPECTED", "DRAINING, ACTIVE", "DRAINING, SUSPECTED",
      "QUARANTINE, ACTIVE", "SUSPECTED, QUARANTINE", "ACTIVE, WARMING", "ACTIVE, ACTIVE", "DEAD, DEAD"})
  void notableIllegalMovesAreRefused(WorkerState from, WorkerState to) {
    assertFalse(from.canMoveTo(to));
    IllegalStateTransition e = assertThrows(IllegalStateTransition.class, () -> from.transitionTo(to));
    assertTrue(e.getMessage().contains(from.name()) && e.getMessage().contains(to.name()), e.getMessage());
    assertEquals(from.name(), e.from());
    assertEquals(to.name(), e.to());
    assertEquals("worker state", e.machine());
  }

  @Test
  void deadWorkerCannotBecomeActiveDirectlyAndTheMessageListsTheWaysOut() {
    IllegalStateTransition e = assertThrows(IllegalStateTransition.class, () -> DEAD.transitionTo(ACTIVE));
    assertEquals("worker state DEAD cannot move to ACTIVE (legal: QUARANTINE, OFFLINE, REGISTERED)", e.getMessage());
  }

  @Test
  void deadWorkerComesBackThroughQuarantineAndWarming() {
    assertEquals(ACTIVE, DEAD.transitionTo(QUARANTINE).transitionTo(WARMING).transitionTo(ACTIVE));
  }

  @Test
  void staleDetectionPathGoesActiveSuspectedDead() {
    assertEquals(DEAD, ACTIVE.transitionTo(SUSPECTED).transitionTo(DEAD));
    assertEquals(ACTIVE, SUSPECTED.transitionTo(ACTIVE), "a suspect that heartbeats again is active again");
  }

  @Test
  void nullIsNeverALegalTarget() {
    assertFalse(ACTIVE.canMoveTo(null));
    IllegalStateTransition e = assertThrows(IllegalStateTransition.class, () -> ACTIVE.transitionTo(null));
    assertTrue(e.getMessage().contains("ACTIVE cannot move to null"), e.getMessage());
  }

  @Test
  void onlyActiveDrainingAndSuspectedWorkersKeepSlots() {
    for (WorkerState w : WorkerState.values()) {
      assertEquals(EnumSet.of(ACTIVE, DRAINING, SUSPECTED).contains(w), w.consumes(), w.name());
    }
  }

  @Test
  void everyStateButOfflineAndDeadIsLive() {
    for (WorkerState w : WorkerState.values()) {
      assertEquals(w != OFFLINE && w != DEAD, w.live(), w.name());
    }
  }

  @Test
  void parseReadsEveryNameAndToleratesCaseAndBlanks() {
    for (WorkerState w : WorkerState.values()) assertEquals(w, WorkerState.parse(w.name()));
    assertEquals(QUARANTINE, WorkerState.parse(" quarantine "));
  }

  @Test
  void parseRefusesUnknownOrMissingValuesNamingThem() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> WorkerState.parse("ZOMBIE"));
    assertTrue(e.getMessage().contains("'ZOMBIE'"), e.getMessage());
    IllegalArgumentException n = assertThrows(IllegalArgumentException.class, () -> WorkerState.parse(null));
    assertTrue(n.getMessage().contains("null"), n.getMessage());
    assertThrows(IllegalArgumentException.class, () -> WorkerState.parse(""));
  }
}
