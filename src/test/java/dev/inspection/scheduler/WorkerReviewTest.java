package dev.inspection.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.control.WorkerState;
import dev.inspection.scheduler.ControlStore.WorkerChange;
import dev.inspection.scheduler.ControlStore.WorkerRow;
import io.vertx.core.json.JsonObject;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The leader's per-worker decision ({@link RoundPlanner#review}), with ages injected (no clock, no database). */
class WorkerReviewTest {
  static final ControlLoop.Settings S = new ControlLoop.Settings(500, 3_000, 15_000, 30_000, 60_000, 30_000, 30_000, 5_000, 10_000, 15_000,
      32, 60_000, RebalancePlanner.Settings.defaults(), SlotWeight.Coefficients.defaults(), 256);

  private static WorkerRow w(WorkerState st, long heartbeatAge, long stateAge) {
    return new WorkerRow("w", st, heartbeatAge, stateAge, new JsonObject());
  }

  private static WorkerState next(WorkerRow w, boolean lockFree, boolean pastGrace, boolean anyActive, int owned) {
    Optional<WorkerChange> c = RoundPlanner.review(w, lockFree, pastGrace, anyActive, owned, S);
    return c.map(WorkerChange::to).orElse(w.state());
  }

  @Test
  void aFreeLivenessLockMeansDeadAtOnceWithoutWaitingForHeartbeats() {
    assertEquals(WorkerState.DEAD, next(w(WorkerState.ACTIVE, 100, 60_000), true, true, true, 10));
    assertEquals(WorkerState.DEAD, next(w(WorkerState.DRAINING, 100, 1_000), true, true, true, 3));
  }

  @Test
  void heartbeatAgesGiveSuspectedThenDeadAndAReturningHeartbeatClearsSuspicion() {
    assertEquals(WorkerState.ACTIVE, next(w(WorkerState.ACTIVE, 14_999, 60_000), false, true, true, 1));
    assertEquals(WorkerState.SUSPECTED, next(w(WorkerState.ACTIVE, 15_001, 60_000), false, true, true, 1));
    assertEquals(WorkerState.DEAD, next(w(WorkerState.SUSPECTED, 30_001, 10_000), false, true, true, 1));
    assertEquals(WorkerState.ACTIVE, next(w(WorkerState.SUSPECTED, 200, 10_000), false, true, true, 1));
  }

  @Test
  void aNewLeaderDeclaresNobodyDeadDuringItsGrace() {
    assertEquals(WorkerState.ACTIVE, next(w(WorkerState.ACTIVE, 300_000, 600_000), true, false, true, 5));
  }

  @Test
  void deadWorkerIsQuarantinedOnlyWhenItHeartbeatsAfterBeingDeclaredDeadAndStillHoldsItsLock() {
    // declared dead 1 s ago, last heartbeat 2 s ago: that heartbeat is from before — stays DEAD (no flapping)
    assertEquals(WorkerState.DEAD, next(w(WorkerState.DEAD, 2_000, 1_000), false, true, true, 0));
    assertEquals(WorkerState.QUARANTINE, next(w(WorkerState.DEAD, 200, 5_000), false, true, true, 0));
    assertEquals(WorkerState.DEAD, next(w(WorkerState.DEAD, 200, 5_000), true, true, true, 0), "its process is gone");
    assertEquals(WorkerState.WARMING, next(w(WorkerState.QUARANTINE, 200, 30_000), false, true, true, 0));
    assertEquals(WorkerState.QUARANTINE, next(w(WorkerState.QUARANTINE, 200, 29_000), false, true, true, 0));
  }

  @Test
  void warmingWorkerWaitsItsWarmUpUnlessNoWorkerIsActive() {
    assertEquals(WorkerState.WARMING, next(w(WorkerState.WARMING, 200, 59_000), false, true, true, 0));
    assertEquals(WorkerState.ACTIVE, next(w(WorkerState.WARMING, 200, 60_000), false, true, true, 0));
    assertEquals(WorkerState.ACTIVE, next(w(WorkerState.WARMING, 200, 10), false, true, false, 0), "cold start");
    assertEquals(WorkerState.WARMING, next(w(WorkerState.REGISTERED, 200, 10), false, true, true, 0));
  }

  @Test
  void drainingWorkerGoesOfflineOnlyWhenItHoldsNoSlot() {
    assertEquals(WorkerState.DRAINING, next(w(WorkerState.DRAINING, 200, 1_000), false, true, true, 1));
    assertEquals(WorkerState.OFFLINE, next(w(WorkerState.DRAINING, 200, 1_000), false, true, true, 0));
  }

  @Test
  void offlineWorkersAreLeftAlone() {
    assertTrue(RoundPlanner.review(w(WorkerState.OFFLINE, 999_999, 999_999), true, true, true, 0, S).isEmpty());
  }
}
