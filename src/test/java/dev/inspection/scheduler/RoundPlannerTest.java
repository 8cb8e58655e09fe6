package dev.inspection.scheduler;

import static dev.inspection.control.SlotState.ACTIVE;
import static dev.inspection.control.SlotState.DRAINING_OLD;
import static dev.inspection.control.SlotState.FREE;
import static dev.inspection.control.SlotState.LOADING_NEW;
import static dev.inspection.control.SlotState.MOVING;
import static dev.inspection.control.SlotState.ORPHANED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.control.SlotState;
import dev.inspection.control.WorkerState;
import dev.inspection.scheduler.ControlStore.Bump;
import dev.inspection.scheduler.ControlStore.SlotMove;
import dev.inspection.scheduler.ControlStore.SlotRow;
import dev.inspection.scheduler.ControlStore.WorkerChange;
import dev.inspection.scheduler.ControlStore.WorkerRow;
import dev.inspection.scheduler.RoundPlanner.Bumps;
import dev.inspection.scheduler.RoundPlanner.Decision;
import dev.inspection.scheduler.RoundPlanner.Moves;
import dev.inspection.scheduler.RoundPlanner.Nothing;
import dev.inspection.scheduler.RoundPlanner.Snapshot;
import dev.inspection.scheduler.RoundPlanner.WorkerChanges;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** One leader round's decision from a snapshot: the priority order of the kinds of change, without a database. */
class RoundPlannerTest {
  private static final ControlLoop.Settings S = WorkerReviewTest.S;
  private static final long NOW = 10_000_000;

  private final List<WorkerRow> workers = new ArrayList<>();
  private final List<SlotRow> slots = new ArrayList<>();
  private final Set<String> crashed = new HashSet<>();
  private final AtomicInteger weightReads = new AtomicInteger();
  private boolean pastGrace = true;
  private boolean rebalanceDue;

  /** A worker heartbeating 100 ms ago, in its state for a minute. */
  private void worker(String id, WorkerState state) {
    worker(id, state, 100, 60_000);
  }

  private void worker(String id, WorkerState state, long heartbeatAgeMs, long stateAgeMs) {
    workers.add(new WorkerRow(id, state, heartbeatAgeMs, stateAgeMs, new JsonObject()));
  }

  private void slot(int id, String owner, SlotState state) {
    slot(id, owner, state, null, 1_000, false);
  }

  private void slot(int id, String owner, SlotState state, String target, long stateAgeMs, boolean expired) {
    slots.add(new SlotRow(id, owner, 7, state, target, stateAgeMs, expired));
  }

  private Decision decide() {
    Supplier<Map<Integer, Double>> weights = () -> {
      weightReads.incrementAndGet();
      Map<Integer, Double> w = new HashMap<>();
      for (SlotRow s : slots) w.put(s.slot(), 1.0);
      return w;
    };
    return RoundPlanner.decide(new Snapshot(workers, slots, crashed, NOW, pastGrace, rebalanceDue, Map.of(), Map.of(), weights), S);
  }

  private static List<Bump> bumps(Decision d) {
    return assertInstanceOf(Bumps.class, d).bumps();
  }

  @Test
  void workerChangesComeBeforeOrphans() {
    worker("w1", WorkerState.ACTIVE);
    worker("w2", WorkerState.ACTIVE);
    crashed.add("w2");
    slot(0, "w2", ACTIVE);
    slot(1, "ghost", ACTIVE); // an owner nobody knows: would be orphaned
    List<WorkerChange> changes = assertInstanceOf(WorkerChanges.class, decide()).changes();
    assertEquals(List.of(new WorkerChange("w2", WorkerState.ACTIVE, WorkerState.DEAD, "liveness lock free: the process is gone")), changes);
    assertEquals(0, weightReads.get(), "no slot is placed, so no weight is computed");
  }

  @Test
  void orphansComeBeforeHandovers() {
    worker("w1", WorkerState.ACTIVE);
    worker("w2", WorkerState.ACTIVE);
    worker("gone", WorkerState.DEAD, 100_000, 50_000);
    slot(0, "gone", ACTIVE);
    slot(1, "w1", DRAINING_OLD, "w2", 1_000, false);
    slot(2, "w2", ACTIVE, null, 1_000, true);
    assertEquals(List.of(new Bump(0, 7, ACTIVE, null, ORPHANED, "owner DEAD"), new Bump(2, 7, ACTIVE, null, ORPHANED, "lease expired")),
        bumps(decide()));
  }

  @Test
  void aReleasedSlotIsNeverOrphanedEvenWhenItsLeaseExpiredOrItsOwnerIsGone() {
    worker("w2", WorkerState.ACTIVE);
    worker("gone", WorkerState.OFFLINE);
    slot(0, "gone", DRAINING_OLD, "w2", 1_000, true);
    assertEquals(List.of(new Bump(0, 7, DRAINING_OLD, "w2", LOADING_NEW, "handover")), bumps(decide()));
  }

  @Test
  void handoverBeforeAssigningFreeSlots() {
    worker("w1", WorkerState.ACTIVE);
    worker("w2", WorkerState.ACTIVE);
    slot(0, "w1", DRAINING_OLD, "w2", 1_000, false);
    slot(1, null, FREE);
    assertEquals(List.of(new Bump(0, 7, DRAINING_OLD, "w2", LOADING_NEW, "handover")), bumps(decide()));
  }

  @Test
  void orphanedThenFreeSlotsAreAssignedBeforeADrainMovesAnything() {
    worker("w1", WorkerState.DRAINING);
    worker("w2", WorkerState.ACTIVE);
    slot(0, "w1", ACTIVE);
    slot(1, null, FREE);
    slot(2, null, ORPHANED);
    assertEquals(List.of(new Bump(2, 7, ORPHANED, "w2", LOADING_NEW, "assign")), bumps(decide()), "an orphan first: it is never held back");
    assertEquals(1, weightReads.get(), "weights are computed once per round, when slots are placed");
    slots.set(2, new SlotRow(2, "w2", 8, ACTIVE, null, 100, false));
    Bumps next = assertInstanceOf(Bumps.class, decide());
    assertEquals(List.of(new Bump(1, 7, FREE, "w2", LOADING_NEW, "cold start")), next.bumps());
    assertEquals(Map.of("w2", 16), next.waves(), "a FREE slot goes in a wave (the first one: 16)");
  }

  @Test
  void drainsBeforeRebalance() {
    worker("w1", WorkerState.DRAINING);
    worker("w2", WorkerState.ACTIVE);
    worker("w3", WorkerState.ACTIVE);
    slot(0, "w1", ACTIVE);
    slot(1, "w1", ACTIVE);
    slot(2, "w2", ACTIVE);
    slot(3, "w2", ACTIVE);
    slot(4, "w2", ACTIVE);
    rebalanceDue = true;
    Moves moves = assertInstanceOf(Moves.class, decide());
    assertNull(moves.rebalance(), "a drain, not a rebalance");
    assertEquals(List.of("drain", "drain"), moves.moves().stream().map(SlotMove::reason).toList());
    assertEquals(List.of(0, 1), moves.moves().stream().map(m -> m.row().slot()).toList());
    assertEquals(List.of("w3", "w3"), moves.moves().stream().map(SlotMove::target).toList(), "to the lighter worker");
  }

  @Test
  void aDueRebalanceMovesSlotsFromTheHeavyToTheLightWorker() {
    unbalanced();
    rebalanceDue = true;
    Moves moves = assertInstanceOf(Moves.class, decide());
    assertNotNull(moves.rebalance());
    assertTrue(moves.moves().stream().allMatch(m -> m.reason().equals("rebalance") && m.row().owner().equals("w1") && m.target().equals("w2")));
    assertEquals(moves.rebalance().moves().size(), moves.moves().size());
  }

  @Test
  void aRebalanceThatIsNotDueIsNotPlanned() {
    unbalanced();
    assertNull(assertInstanceOf(Nothing.class, decide()).rebalance());
  }

  @Test
  void aDueRebalanceThatMovesNothingStillReportsItsPlan() {
    worker("w1", WorkerState.ACTIVE);
    worker("w2", WorkerState.ACTIVE);
    slot(0, "w1", ACTIVE);
    slot(1, "w2", ACTIVE);
    rebalanceDue = true;
    Nothing nothing = assertInstanceOf(Nothing.class, decide());
    assertTrue(nothing.rebalance().reason().startsWith("balanced"), nothing.rebalance().reason());
  }

  @Test
  void noRebalanceWhileAnythingMoves() {
    for (SlotState inFlight : List.of(MOVING, LOADING_NEW)) {
      slots.clear();
      workers.clear();
      unbalanced();
      slot(9, "w1", inFlight);
      rebalanceDue = true;
      assertNull(assertInstanceOf(Nothing.class, decide()).rebalance(), inFlight + " slot in flight");
    }
  }

  @Test
  void nothingIsDeclaredDeadDuringTheLeaderGrace() {
    worker("w1", WorkerState.ACTIVE, 300_000, 600_000);
    crashed.add("w1");
    slot(0, "w1", ACTIVE, null, 1_000, true);
    pastGrace = false;
    assertNull(assertInstanceOf(Nothing.class, decide()).rebalance(), "no worker DEAD, no lease expired");
    pastGrace = true;
    assertEquals(WorkerState.DEAD, assertInstanceOf(WorkerChanges.class, decide()).changes().get(0).to());
  }

  @Test
  void slotsGoOnlyToActiveWorkersWithAFreshHeartbeat() {
    worker("fresh", WorkerState.ACTIVE, 100, 60_000);
    worker("stale", WorkerState.ACTIVE, 7_001, 60_000);
    worker("suspected", WorkerState.SUSPECTED, 20_000, 10_000);
    worker("warming", WorkerState.WARMING, 100, 1_000);
    for (int i = 0; i < 4; i++) slot(i, null, FREE);
    List<Bump> bumps = bumps(decide());
    assertEquals(4, bumps.size());
    assertTrue(bumps.stream().allMatch(b -> b.newOwner().equals("fresh")), bumps.toString());
    assertEquals(List.of("fresh"), RoundPlanner.placeable(workers, S));
  }

  @Test
  void freeSlotsWaitWhenNoWorkerCanTakeThem() {
    worker("stale", WorkerState.ACTIVE, 7_001, 60_000);
    slot(0, null, FREE);
    rebalanceDue = true;
    assertNull(assertInstanceOf(Nothing.class, decide()).rebalance());
  }

  @Test
  void anOverdueMoveIsHandedToAnotherWorker() {
    worker("w1", WorkerState.ACTIVE);
    worker("w3", WorkerState.ACTIVE);
    // its intended target w2 is gone: the slot goes to the lightest other worker, never back to its fenced owner
    slot(0, "w1", MOVING, "w2", 10_001, false);
    assertEquals(List.of(new Bump(0, 7, MOVING, "w3", LOADING_NEW, "move timeout")), bumps(decide()));
  }

  @Test
  void aMoveWithinItsTimeoutIsLeftToItsOwner() {
    worker("w1", WorkerState.ACTIVE);
    worker("w2", WorkerState.ACTIVE);
    slot(0, "w1", MOVING, "w2", 9_000, false);
    assertNull(assertInstanceOf(Nothing.class, decide()).rebalance());
  }

  @Test
  void anOverdueMoveIsNotHandedBackToItsOwnerWhenItIsTheOnlyActiveWorker() {
    worker("w1", WorkerState.ACTIVE);
    slot(0, "w1", MOVING, "w2", 10_001, false);
    assertInstanceOf(Nothing.class, decide());
  }

  @Test
  void everyPlannedLeaseChangeIsALegalTransition() {
    worker("w1", WorkerState.ACTIVE);
    worker("w2", WorkerState.ACTIVE);
    worker("gone", WorkerState.DEAD, 100_000, 50_000);
    slot(0, "gone", LOADING_NEW);
    slot(1, "gone", MOVING);
    slot(2, "gone", ACTIVE);
    for (Bump b : bumps(decide())) assertTrue(b.from().canMoveTo(b.newState()) && SlotState.bumpsEpoch(b.from(), b.newState()), b.toString());
  }

  /** w1 holds four slots, w2 none; both ACTIVE for ten minutes, past the join window: the imbalance is the rebalancer's. */
  private void unbalanced() {
    worker("w1", WorkerState.ACTIVE, 100, 600_000);
    worker("w2", WorkerState.ACTIVE, 100, 600_000);
    for (int i = 0; i < 4; i++) slot(i, "w1", ACTIVE);
  }

  /**
   * The scale-out balances by its own weights (without the owner's batch time): the slots on the old worker
   * look 100 times heavier to the rebalancer's weights (its batches are slow: it is loaded), which would give
   * the joining worker 18 of 28 slots; by the scale-out's weights it takes just what evens the count out.
   */
  @Test
  void theScaleOutBalancesByItsOwnWeightsNotTheOwnersBatchTime() {
    worker("w1", WorkerState.ACTIVE, 100, 600_000);
    worker("w2", WorkerState.ACTIVE, 100, 60_000); // joining
    for (int i = 0; i < 20; i++) slot(i, "w1", ACTIVE);
    for (int i = 20; i < 28; i++) slot(i, "w2", ACTIVE);
    Map<Integer, Double> slow = new HashMap<>();
    Map<Integer, Double> even = new HashMap<>();
    for (SlotRow r : slots) {
      slow.put(r.slot(), "w1".equals(r.owner()) ? 100.0 : 1.0);
      even.put(r.slot(), 1.0);
    }
    Decision withBatchTime = RoundPlanner.decide(new Snapshot(workers, slots, crashed, NOW, true, false, Map.of(), Map.of(), () -> slow, Map.of()), S);
    assertEquals(10, assertInstanceOf(Moves.class, withBatchTime).moves().size(), "the rebalancer's weights: half of w1's slots, 18 on w2");
    Decision own = RoundPlanner.decide(new Snapshot(workers, slots, crashed, NOW, true, false, Map.of(), Map.of(), () -> slow, Map.of(), () -> even), S);
    List<SlotMove> moves = assertInstanceOf(Moves.class, own).moves();
    assertEquals(6, moves.size(), "20 + 8 slots of equal weight: 6 move, 14 each");
    assertTrue(moves.stream().allMatch(m -> "w2".equals(m.target())));
  }
}
