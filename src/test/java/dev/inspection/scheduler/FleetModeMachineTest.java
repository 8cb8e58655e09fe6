package dev.inspection.scheduler;

import static dev.inspection.control.FleetMode.BACKPRESSURE_CRITICAL;
import static dev.inspection.control.FleetMode.BACKPRESSURE_HIGH;
import static dev.inspection.control.FleetMode.NORMAL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.control.IllegalStateTransition;
import dev.inspection.scheduler.FleetModeMachine.Change;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FleetModeMachineTest {
  // backlog 1000 / 10000, growth 100/s for 2 samples, 50 % failing for 2 samples, p99 5 s / 30 s, leave below half, dwell 30 s
  private static final FleetModeMachine.Settings S = new FleetModeMachine.Settings(1000, 10_000, 100, 2, 50, 2, 5000, 30_000, 0.5, 30_000);

  private static FleetSignals backlog(long n) {
    return new FleetSignals(n, Double.NaN, 0, 2, -1);
  }

  @Test
  void backlogAboveTheHighThresholdEntersHighAtOnceWithItsReason() {
    FleetModeMachine m = new FleetModeMachine(S, 0);
    assertNull(m.step(backlog(999), 1000), "below the threshold nothing changes");
    Change c = m.step(backlog(1000), 2000);
    assertNotNull(c);
    assertEquals(NORMAL, c.from());
    assertEquals(BACKPRESSURE_HIGH, c.to());
    assertEquals("backlog", c.cause());
    assertTrue(c.reason().contains("1000 messages >= 1000"), c.reason());
    assertEquals(2000, m.sinceMs());
  }

  @Test
  void criticalBacklogJumpsStraightFromNormalToCritical() {
    FleetModeMachine m = new FleetModeMachine(S, 0);
    Change c = m.step(backlog(20_000), 1000);
    assertEquals(BACKPRESSURE_CRITICAL, c.to());
    assertEquals("backlog", c.cause());
  }

  @Test
  void hysteresisKeepsHighWhileTheBacklogHoversBetweenLeaveAndEnterThresholds() {
    FleetModeMachine m = new FleetModeMachine(S, 0);
    m.step(backlog(1500), 0);
    // below the entry threshold but above half of it: stays, however long
    for (long t = 10_000; t <= 300_000; t += 10_000) assertNull(m.step(backlog(600), t), "600 is inside the band [500, 1000)");
    assertEquals(BACKPRESSURE_HIGH, m.mode());
    Change c = m.step(backlog(499), 310_000);
    assertEquals(NORMAL, c.to());
    assertEquals("recovered", c.cause());
  }

  @Test
  void minimumDwellHoldsAModeEvenWhenEverySignalIsCalm() {
    FleetModeMachine m = new FleetModeMachine(S, 0);
    m.step(backlog(1500), 10_000);
    assertNull(m.step(backlog(0), 20_000), "10 s into a 30 s dwell");
    assertNull(m.step(backlog(0), 39_999), "one ms short of the dwell");
    assertEquals(NORMAL, m.step(backlog(0), 40_000).to());
  }

  @Test
  void criticalStepsDownOneModeAtATimeEachWithItsOwnDwell() {
    FleetModeMachine m = new FleetModeMachine(S, 0);
    m.step(backlog(20_000), 0);
    assertEquals(BACKPRESSURE_HIGH, m.step(backlog(0), 30_000).to(), "down to HIGH first, not to NORMAL");
    assertNull(m.step(backlog(0), 40_000), "HIGH has its own dwell");
    assertEquals(NORMAL, m.step(backlog(0), 60_000).to());
  }

  @Test
  void criticalLeavesToHighWhenTheBacklogFallsBelowHalfTheCriticalThresholdEvenIfStillAboveHigh() {
    FleetModeMachine m = new FleetModeMachine(S, 0);
    m.step(backlog(20_000), 0);
    assertNull(m.step(backlog(6000), 60_000), "6000 >= 10000 * 0.5 holds CRITICAL");
    assertEquals(BACKPRESSURE_HIGH, m.step(backlog(4000), 70_000).to());
    assertNull(m.step(backlog(4000), 200_000), "4000 is still above the HIGH threshold");
  }

  @Test
  void growthCountsOnlyWhenSustainedForTheConfiguredSamples() {
    FleetModeMachine m = new FleetModeMachine(S, 0);
    assertNull(m.step(new FleetSignals(100, 150, 0, 1, -1), 1000), "one sample of growth is noise");
    assertNull(m.step(new FleetSignals(100, 20, 0, 1, -1), 2000), "the streak breaks");
    assertNull(m.step(new FleetSignals(200, 150, 0, 1, -1), 3000));
    Change c = m.step(new FleetSignals(350, 150, 0, 1, -1), 4000);
    assertEquals(BACKPRESSURE_HIGH, c.to());
    assertEquals("growth", c.cause());
    assertNull(m.step(new FleetSignals(300, 60, 0, 1, -1), 60_000), "growth 60/s >= 100 * 0.5 still holds HIGH");
    assertEquals(NORMAL, m.step(new FleetSignals(200, -100, 0, 1, -1), 70_000).to(), "a shrinking backlog lets go");
  }

  @Test
  void workersFailingCommitsEnterHighAsInScenarioF() {
    FleetModeMachine m = new FleetModeMachine(S, 0);
    assertNull(m.step(new FleetSignals(0, 0, 1, 3, -1), 1000), "1 of 3 (33 %) is below 50 %");
    assertNull(m.step(new FleetSignals(0, 0, 2, 3, -1), 2000), "one sample of failures is not an outage");
    assertNull(m.step(new FleetSignals(0, 0, 0, 3, -1), 3000), "the streak breaks");
    assertNull(m.step(new FleetSignals(0, 0, 3, 3, -1), 4000));
    Change c = m.step(new FleetSignals(0, 0, 2, 3, -1), 5000);
    assertEquals(BACKPRESSURE_HIGH, c.to());
    assertEquals("failing_workers", c.cause());
    assertTrue(c.reason().contains("2 of 3 workers failing commits (>= 50 %) for 2 samples"), c.reason());
    assertNull(m.step(new FleetSignals(0, 0, 1, 3, -1), 60_000), "33 % >= 25 %: still failing enough to hold");
    assertEquals(NORMAL, m.step(new FleetSignals(0, 0, 0, 3, -1), 61_000).to());
  }

  @Test
  void commitLatencyEntersHighThenCritical() {
    FleetModeMachine m = new FleetModeMachine(S, 0);
    assertEquals(BACKPRESSURE_HIGH, m.step(new FleetSignals(0, 0, 0, 1, 6000), 1000).to());
    Change c = m.step(new FleetSignals(0, 0, 0, 1, 31_000), 2000);
    assertEquals(BACKPRESSURE_CRITICAL, c.to(), "up never waits for a dwell");
    assertEquals("commit_latency", c.cause());
  }

  @Test
  void unknownSignalsNeitherRaiseNorHoldAMode() {
    FleetModeMachine m = new FleetModeMachine(S, 0);
    FleetSignals unknown = new FleetSignals(-1, Double.NaN, 0, 0, -1);
    assertNull(m.step(unknown, 1000));
    m.step(backlog(1500), 2000);
    assertEquals(NORMAL, m.step(unknown, 40_000).to(), "with nothing measured, the dwell over, the mode steps down");
  }

  @Test
  void aNewLeaderContinuesFromTheStoredModeAndItsSince() {
    FleetModeMachine m = new FleetModeMachine(S, 100_000);
    m.restore(BACKPRESSURE_HIGH, "backlog: 5000 messages >= 1000", 90_000);
    assertNull(m.step(backlog(0), 110_000), "the stored since counts: 20 s into the dwell");
    assertEquals(NORMAL, m.step(backlog(0), 120_000).to());
  }

  @Test
  void theTransitionTableRefusesCriticalStraightToNormal() {
    org.junit.jupiter.api.Assertions.assertThrows(IllegalStateTransition.class,
        () -> dev.inspection.control.FleetMode.TRANSITIONS.check(BACKPRESSURE_CRITICAL, NORMAL));
  }

  @Test
  void signalsMeasureGrowthPerSecondAndWorkersWhoseErrorsRose() {
    FleetSignals.Sample a = new FleetSignals.Sample(10_000, 100, Map.of("w1", 5L, "w2", 0L), Map.of("w1", 40.0));
    FleetSignals.Sample b = new FleetSignals.Sample(15_000, 600, Map.of("w1", 9L, "w2", 0L, "w3", 7L), Map.of("w1", 80.0, "w2", 12.0));
    FleetSignals s = FleetSignals.between(a, b);
    assertEquals(100.0, s.growthPerSec(), 1e-9, "500 more messages in 5 s");
    assertEquals(1, s.failingWorkers(), "w1's errors rose; w2's did not; w3 is new (no earlier count to compare)");
    assertEquals(3, s.liveWorkers());
    assertEquals(80.0, s.commitP99Ms());
    assertTrue(Double.isNaN(FleetSignals.between(null, b).growthPerSec()), "no growth from a single sample");
    assertTrue(Double.isNaN(FleetSignals.between(a, new FleetSignals.Sample(20_000, -1, Map.of(), Map.of())).growthPerSec()), "no growth from an unknown backlog");
  }
}
