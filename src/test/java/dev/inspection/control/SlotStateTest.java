package dev.inspection.control;

import static dev.inspection.control.SlotState.ACTIVE;
import static dev.inspection.control.SlotState.DRAINING_OLD;
import static dev.inspection.control.SlotState.FREE;
import static dev.inspection.control.SlotState.LOADING_NEW;
import static dev.inspection.control.SlotState.MOVING;
import static dev.inspection.control.SlotState.ORPHANED;
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

class SlotStateTest {
  /** The design's table, written out again here so that a slip in the enum cannot agree with itself. */
  private static final Map<SlotState, Set<SlotState>> LEGAL = Map.of(
      FREE, EnumSet.of(LOADING_NEW),
      ORPHANED, EnumSet.of(LOADING_NEW, FREE),
      LOADING_NEW, EnumSet.of(ACTIVE, ORPHANED, DRAINING_OLD),
      ACTIVE, EnumSet.of(MOVING, ORPHANED, DRAINING_OLD),
      MOVING, EnumSet.of(DRAINING_OLD, LOADING_NEW, ORPHANED, ACTIVE),
      DRAINING_OLD, EnumSet.of(LOADING_NEW, ORPHANED));

  @Test
  void everyLegalTransitionIsAccepted() {
    int accepted = 0;
    for (Map.Entry<SlotState, Set<SlotState>> e : LEGAL.entrySet()) {
      for (SlotState next : e.getValue()) {
        assertTrue(e.getKey().canMoveTo(next), e.getKey() + " -> " + next);
        assertEquals(next, e.getKey().transitionTo(next));
        accepted++;
      }
    }
    assertEquals(15, accepted);
  }

  @Test
  void everyPairOutsideTheTableIsRefusedNamingBothStates() {
    assertEquals(EnumSet.allOf(SlotState.class), LEGAL.keySet(), "table covers every state");
    int refused = 0;
    for (SlotState from : SlotState.values()) {
      for (SlotState to : SlotState.values()) {
        if (LEGAL.get(from).contains(to)) continue;
        assertFalse(from.canMoveTo(to), from + " -> " + to);
        IllegalStateTransition e = assertThrows(IllegalStateTransition.class, () -> from.transitionTo(to));
        assertTrue(e.getMessage().startsWith("slot state " + from + " cannot move to " + to + " (legal: "),
            e.getMessage());
        refused++;
      }
    }
    assertEquals(36 - 15, refused);
  }

  @ParameterizedTest(name = "{0} -> {1} is illegal")
  @CsvSource({
      "FREE, ACTIVE", "FREE, ORPHANED", "ACTIVE, FREE", "ACTIVE, LOADING_NEW", "LOADING_NEW, MOVING",
      "LOADING_NEW, FREE", "DRAINING_OLD, ACTIVE", "DRAINING_OLD, FREE", "ORPHANED, ACTIVE", "MOVING, FREE",
      "ACTIVE, ACTIVE", "FREE, FREE"})
  void notableIllegalMovesAreRefused(SlotState from, SlotState to) {
    assertFalse(from.canMoveTo(to));
    IllegalStateTransition e = assertThrows(IllegalStateTransition.class, () -> from.transitionTo(to));
    assertTrue(e.getMessage().contains(from.name()) && e.getMessage().contains(to.name()), e.getMessage());
    assertEquals("slot state", e.machine());
  }

  @Test
  void freeSlotCannotBeConsumedWithoutLoadingFirstAndTheMessageSaysHow() {
    IllegalStateTransition e = assertThrows(IllegalStateTransition.class, () -> FREE.transitionTo(ACTIVE));
    assertEquals("slot state FREE cannot move to ACTIVE (legal: LOADING_NEW)", e.getMessage());
  }

  @Test
  void aFullHandOverWalksActiveMovingDrainingOldLoadingNewActive() {
    assertEquals(ACTIVE,
        ACTIVE.transitionTo(MOVING).transitionTo(DRAINING_OLD).transitionTo(LOADING_NEW).transitionTo(ACTIVE));
  }

  @Test
  void onlyLoadingNewAndOrphanedBumpTheEpoch() {
    for (SlotState from : SlotState.values()) {
      for (SlotState to : SlotState.values()) {
        assertEquals(to == LOADING_NEW || to == ORPHANED, SlotState.bumpsEpoch(from, to), from + " -> " + to);
      }
    }
    assertTrue(SlotState.bumpsEpoch(MOVING, LOADING_NEW));
    assertTrue(SlotState.bumpsEpoch(ACTIVE, ORPHANED));
    assertFalse(SlotState.bumpsEpoch(MOVING, ACTIVE), "cancelling a move keeps the epoch");
    assertFalse(SlotState.bumpsEpoch(ACTIVE, MOVING), "marking a slot for a move keeps the epoch");
  }

  @Test
  void ownedMeansSomeWorkerHoldsTheSlot() {
    for (SlotState s : SlotState.values()) {
      assertEquals(s != FREE && s != ORPHANED, s.owned(), s.name());
    }
  }

  @Test
  void parseReadsEveryNameAndRefusesOthersNamingThem() {
    for (SlotState s : SlotState.values()) assertEquals(s, SlotState.parse(s.name()));
    assertEquals(DRAINING_OLD, SlotState.parse("draining_old"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SlotState.parse("LOADING"));
    assertTrue(e.getMessage().contains("'LOADING'"), e.getMessage());
    IllegalArgumentException n = assertThrows(IllegalArgumentException.class, () -> SlotState.parse(null));
    assertTrue(n.getMessage().contains("null"), n.getMessage());
  }

  @Test
  void aSlotStillLoadingCanBeHandedStraightBack() {
    // a worker that stops (SIGTERM) while it loads a slot's derived state gives the slot back unconsumed
    assertEquals(DRAINING_OLD, LOADING_NEW.transitionTo(DRAINING_OLD));
    assertTrue(SlotState.TRANSITIONS.allowedFrom(DRAINING_OLD).containsAll(EnumSet.of(ACTIVE, MOVING, LOADING_NEW)));
  }
}
