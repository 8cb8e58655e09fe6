package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.control.SlotState;
import dev.inspection.control.WorkerState;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The guards of the worker's SQL come from the state tables; these tests pin the rows they select to
 * what the worker has always updated, so a change of a table that would change them is noticed here.
 */
class LeaseStoreTest {

  @Test
  void workerRenewsAndHandsBackExactlyTheSlotsItStillHolds() {
    assertEquals(EnumSet.of(SlotState.ACTIVE, SlotState.MOVING, SlotState.LOADING_NEW), LeaseStore.HELD);
    for (SlotState s : LeaseStore.HELD) assertTrue(s.canMoveTo(SlotState.DRAINING_OLD), s + " → DRAINING_OLD");
  }

  @Test
  void activationIsOnlyTheLastStepOfALoad() {
    assertEquals(SlotState.LOADING_NEW, LeaseStore.ACTIVATE_FROM);
    assertTrue(LeaseStore.ACTIVATE_FROM.canMoveTo(SlotState.ACTIVE));
  }

  @Test
  void drainStartsFromEveryStateTheTableAllows() {
    assertEquals(EnumSet.of(WorkerState.REGISTERED, WorkerState.WARMING, WorkerState.ACTIVE, WorkerState.SUSPECTED, WorkerState.QUARANTINE),
        LeaseStore.DRAIN_FROM);
  }

  @Test
  void offlineLeavesTheLeadersDeadVerdictStanding() {
    assertEquals(EnumSet.of(WorkerState.REGISTERED, WorkerState.WARMING, WorkerState.ACTIVE, WorkerState.DRAINING, WorkerState.SUSPECTED,
        WorkerState.QUARANTINE), LeaseStore.OFFLINE_FROM);
    assertTrue(WorkerState.DEAD.canMoveTo(WorkerState.OFFLINE), "the table allows it (for the leader); the worker does not do it");
    assertFalse(LeaseStore.OFFLINE_FROM.contains(WorkerState.DEAD));
  }

  @Test
  void firstStartIsJustRegistered() {
    assertEquals(Arrays.asList(null, WorkerState.REGISTERED), LeaseStore.restart(null));
  }

  @Test
  void restartAfterACleanOrDeclaredEndIsRegistered() {
    assertEquals(List.of(WorkerState.OFFLINE, WorkerState.REGISTERED), LeaseStore.restart(WorkerState.OFFLINE));
    assertEquals(List.of(WorkerState.DEAD, WorkerState.REGISTERED), LeaseStore.restart(WorkerState.DEAD));
  }

  @Test
  void restartAfterAnUnannouncedEndRecordsDeathFirst() {
    for (WorkerState s : EnumSet.of(WorkerState.REGISTERED, WorkerState.WARMING, WorkerState.ACTIVE, WorkerState.DRAINING, WorkerState.SUSPECTED,
        WorkerState.QUARANTINE)) {
      List<WorkerState> path = LeaseStore.restart(s);
      assertEquals(List.of(s, WorkerState.DEAD, WorkerState.REGISTERED), path);
      for (int i = 1; i < path.size(); i++) assertTrue(path.get(i - 1).canMoveTo(path.get(i)), path.get(i - 1) + " → " + path.get(i));
    }
  }
}
