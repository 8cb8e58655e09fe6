package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.control.IllegalStateTransition;
import dev.inspection.worker.DegradedMode.Change;
import dev.inspection.worker.DegradedMode.Mode;
import dev.inspection.worker.DegradedMode.Settings;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The degraded write mode's machine on a hand-driven clock: thresholds, min commits, hysteresis, dwell. */
class DegradedModeTest {
  // window 180 s, 10 commits at least, enter > 30 % failed or p99 > 5000 ms; healthy: <= 5 % failed, p99 <= 1000 ms; dwell 60 s
  private static final Settings S = new Settings(true, 180_000, 10, 0.3, 5000, 0.05, 1000, 60_000);

  private static DegradedMode degradedAt(long t) {
    DegradedMode m = new DegradedMode(S, 0);
    for (int i = 0; i < 10; i++) m.commit(t, 10, i >= 4); // 4 of 10 failed
    assertEquals(Mode.DEGRADED, m.evaluate(t, 0).orElseThrow().to());
    return m;
  }

  @Test
  void moreThanThirtyPercentFailedCommitsEnterDegraded() {
    DegradedMode m = new DegradedMode(S, 0);
    for (int i = 0; i < 10; i++) m.commit(1000, 10, i >= 3); // 3 of 10: not more than 30 %
    assertEquals(Optional.empty(), m.evaluate(1000, 0));
    m.commit(1001, 10, false); // 4 of 11
    Change c = m.evaluate(1001, 0).orElseThrow();
    assertEquals(Mode.NORMAL, c.from());
    assertEquals(Mode.DEGRADED, c.to());
    assertTrue(c.reason().contains("4 of 11 commits failed"), c.reason());
    assertEquals(Mode.DEGRADED, m.status().mode());
    assertEquals(1001, m.status().since());
  }

  @Test
  void fewerCommitsThanTheMinimumNeverEnterOnRatioOrP99() {
    DegradedMode m = new DegradedMode(S, 0);
    for (int i = 0; i < 9; i++) m.commit(1000, 9000, false);
    assertEquals(Optional.empty(), m.evaluate(1000, 0));
  }

  @Test
  void commitP99OverTheLimitEntersDegraded() {
    DegradedMode m = new DegradedMode(S, 0);
    for (int i = 0; i < 99; i++) m.commit(1000, 100, true);
    m.commit(1000, 6000, true); // one slow commit in 100: p99 is the 99th value, still 100 ms
    assertEquals(Optional.empty(), m.evaluate(1000, 0));
    m.commit(1000, 6000, true); // two of 101: p99 now 6000 ms
    Change c = m.evaluate(1000, 0).orElseThrow();
    assertTrue(c.reason().startsWith("commit p99 6000 ms"), c.reason());
  }

  @Test
  void aCommitStuckInFlightLongerThanTheP99LimitEntersAlone() {
    DegradedMode m = new DegradedMode(S, 0);
    assertEquals(Optional.empty(), m.evaluate(1000, 5000));
    Change c = m.evaluate(1000, 5001).orElseThrow();
    assertTrue(c.reason().startsWith("a commit in flight for 5001 ms"), c.reason());
  }

  @Test
  void failuresOlderThanTheWindowNoLongerCount() {
    DegradedMode m = new DegradedMode(S, 0);
    for (int i = 0; i < 10; i++) m.commit(0, 10, false);
    for (int i = 0; i < 10; i++) m.commit(180_500, 10, true);
    assertEquals(Optional.empty(), m.evaluate(180_500, 0), "the failures at t=0 left the 180 s window");
  }

  @Test
  void degradedIsLeftOnlyAfterTheDwellHealthy() {
    DegradedMode m = degradedAt(10_000);
    m.commit(20_000, 50, true);
    assertEquals(Optional.empty(), m.evaluate(20_000, 0), "healthy, but not for 60 s yet");
    assertEquals(Optional.empty(), m.evaluate(79_999, 0));
    Change c = m.evaluate(80_000, 0).orElseThrow();
    assertEquals(Mode.NORMAL, c.to());
    assertTrue(c.reason().startsWith("healthy for 60 s"), c.reason());
  }

  @Test
  void anUnhealthyCommitWhileDegradedRestartsTheDwell() {
    DegradedMode m = degradedAt(0);
    m.evaluate(10_000, 0); // healthy since 10 s
    m.commit(40_000, 2000, true); // slower than the exit p99 (1000 ms), though below the enter p99: hysteresis
    assertEquals(Optional.empty(), m.evaluate(40_000, 0));
    assertEquals(Optional.empty(), m.evaluate(99_000, 0), "the slow commit is still inside the last 60 s");
    assertEquals(Optional.empty(), m.evaluate(100_001, 0), "healthy again only since now");
    assertEquals(Mode.NORMAL, m.evaluate(160_001, 0).orElseThrow().to());
  }

  @Test
  void aFailureRatioBetweenExitAndEnterKeepsTheCurrentModeEitherWay() {
    DegradedMode normal = new DegradedMode(S, 0);
    for (int i = 0; i < 100; i++) normal.commit(1000, 10, i >= 20); // 20 % failed: below enter
    assertEquals(Optional.empty(), normal.evaluate(1000, 0));
    DegradedMode degraded = degradedAt(0);
    for (int s = 1; s <= 200; s++) degraded.commit(s * 1000L, 10, s % 5 != 0); // 20 % failed: above exit
    assertEquals(Optional.empty(), degraded.evaluate(200_000, 0));
    assertEquals(Mode.DEGRADED, degraded.status().mode());
  }

  @Test
  void aCommitStuckInFlightKeepsDegraded() {
    DegradedMode m = degradedAt(0);
    assertEquals(Optional.empty(), m.evaluate(70_000, 1500));
    assertEquals(Optional.empty(), m.evaluate(71_000, 0), "healthy from here");
    assertEquals(Optional.empty(), m.evaluate(130_999, 0));
    assertEquals(Mode.NORMAL, m.evaluate(131_000, 0).orElseThrow().to());
  }

  @Test
  void theFailuresThatEnteredDoNotReEnterAfterLeaving() {
    DegradedMode m = degradedAt(0);
    m.evaluate(1, 0);
    assertEquals(Mode.NORMAL, m.evaluate(60_001, 0).orElseThrow().to());
    assertEquals(Optional.empty(), m.evaluate(60_002, 0), "samples were dropped at the change");
    for (int i = 0; i < 10; i++) m.commit(61_000, 10, i % 2 == 0);
    assertEquals(Mode.DEGRADED, m.evaluate(61_000, 0).orElseThrow().to(), "fresh failures enter again");
  }

  @Test
  void aDatabaseThatDoesNotAnswerIsNeverHealthyEvenWithoutCommits() {
    DegradedMode m = degradedAt(0);
    assertEquals(Optional.empty(), m.evaluate(30_000, 0, false));
    assertEquals(Optional.empty(), m.evaluate(120_000, 0, false), "no commits during an outage is no evidence of health");
    assertEquals(Optional.empty(), m.evaluate(121_000, 0, true), "healthy from here");
    assertEquals(Mode.NORMAL, m.evaluate(181_000, 0, true).orElseThrow().to());
  }

  @Test
  void disabledNeverEnters() {
    DegradedMode m = new DegradedMode(new Settings(false, 180_000, 1, 0.3, 5000, 0.05, 1000, 60_000), 0);
    for (int i = 0; i < 50; i++) m.commit(1000, 60_000, false);
    assertEquals(Optional.empty(), m.evaluate(1000, 60_000));
  }

  @Test
  void onlyTheTwoMovesAreLegal() {
    assertTrue(DegradedMode.MODES.allowed(Mode.NORMAL, Mode.DEGRADED));
    assertTrue(DegradedMode.MODES.allowed(Mode.DEGRADED, Mode.NORMAL));
    assertThrows(IllegalStateTransition.class, () -> DegradedMode.MODES.check(Mode.NORMAL, Mode.NORMAL));
  }

  @Test
  void badSettingsNameTheirKey() {
    ConfigException e = assertThrows(ConfigException.class,
        () -> Settings.from(Config.of(Map.of("worker.degraded.exit.failure.ratio", "0.5", "worker.degraded.enter.failure.ratio", "0.3"))));
    assertTrue(e.getMessage().startsWith("worker.degraded.exit.failure.ratio"), e.getMessage());
    e = assertThrows(ConfigException.class, () -> Settings.from(Config.of(Map.of("worker.degraded.exit.p99.ms", "9000"))));
    assertTrue(e.getMessage().startsWith("worker.degraded.exit.p99.ms"), e.getMessage());
    e = assertThrows(ConfigException.class, () -> Settings.from(Config.of(Map.of("worker.backfill.batch", "0"))));
    assertTrue(e.getMessage().startsWith("worker.backfill.batch"), e.getMessage());
    assertFalse(Settings.from(Config.of(Map.of())).windowMs() != 180_000, "defaults: a 3 min window");
  }
}
