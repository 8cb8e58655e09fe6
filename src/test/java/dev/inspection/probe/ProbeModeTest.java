package dev.inspection.probe;

import static dev.inspection.control.FleetMode.BACKPRESSURE_CRITICAL;
import static dev.inspection.control.FleetMode.BACKPRESSURE_HIGH;
import static dev.inspection.control.FleetMode.NORMAL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.control.FleetMode;
import dev.inspection.inventory.Device;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ProbeModeTest {
  private static final ProbeMode.Settings S = new ProbeMode.Settings(1000, 10_000, 60_000, 600_000, 10_000, 15_000, 3000, 10_000);

  private static int inspected(FleetMode mode, int priority, int rounds) {
    int n = 0;
    for (long r = 0; r < rounds; r++) if (ProbeMode.inspect(mode, priority, r, 0)) n++;
    return n;
  }

  @Test
  void normalModeInspectsEveryPriorityEveryRound() {
    for (int p = 1; p <= 3; p++) assertEquals(100, inspected(NORMAL, p, 100));
  }

  @Test
  void highModeHalvesNormalDevicesPausesLowOnesAndNeverSlowsCriticalOnes() {
    assertEquals(100, inspected(BACKPRESSURE_HIGH, 1, 100), "critical: every round");
    assertEquals(50, inspected(BACKPRESSURE_HIGH, 2, 100), "normal: every other round");
    assertEquals(0, inspected(BACKPRESSURE_HIGH, 3, 100), "low: paused");
  }

  @Test
  void criticalModeInspectsOnlyCriticalDevices() {
    assertEquals(100, inspected(BACKPRESSURE_CRITICAL, 1, 100));
    assertEquals(0, inspected(BACKPRESSURE_CRITICAL, 2, 100));
    assertEquals(0, inspected(BACKPRESSURE_CRITICAL, 3, 100));
  }

  @Test
  void atHalfRateHalfOfTheDevicesDueTogetherInspectInEveryRoundNotAllInEveryOtherRound() {
    int devices = 10_000;
    int[] perRound = new int[10];
    for (int i = 0; i < devices; i++) {
      String id = String.format("sim-%06d", i); // the simulator's ids: they differ in their last characters
      int mine = 0;
      for (int r = 0; r < perRound.length; r++) {
        if (ProbeMode.inspect(BACKPRESSURE_HIGH, 2, r, ProbeMode.phase(id))) {
          perRound[r]++;
          mine++;
        }
      }
      assertEquals(5, mine, id + ": every other round");
      assertEquals(ProbeMode.phase(id), ProbeMode.phase(new String(id.toCharArray())), "the phase is the id's, stable");
    }
    for (int r = 0; r < perRound.length; r++) {
      assertTrue(perRound[r] > devices * 0.45 && perRound[r] < devices * 0.55, "round " + r + ": " + perRound[r] + " of " + devices + " inspect");
    }
  }

  @Test
  void atHalfRateTheScheduleSendsAnEvenStreamNotAFullIntervalThenAnEmptyOne() {
    ProbeSchedule s = new ProbeSchedule(0, new Random(7));
    for (int i = 0; i < 2000; i++) s.put(new Device(String.format("sim-%06d", i), 2, "g", "sim", new JsonObject(), 1000, "default", 0), 0);
    s.gate((priority, round, phase) -> ProbeMode.inspect(BACKPRESSURE_HIGH, priority, round, phase));
    for (long t = 1000; t <= 10_000; t += 1000) {
      int n = 0;
      for (long u = t - 900; u <= t; u += 100) n += s.pollDue(u, 10_000).size();
      assertTrue(n > 800 && n < 1200, "second ending at " + t + " ms: " + n + " of 2000 devices inspected (half rate, every second)");
    }
  }

  @Test
  void theScheduleGateSkipsRoundsButKeepsEveryDeviceScheduled() {
    ProbeSchedule s = new ProbeSchedule(0, new Random(5));
    s.put(new Device("crit", 1, "g", "sim", new JsonObject(), 1000, "default", 0), 0);
    s.put(new Device("norm", 2, "g", "sim", new JsonObject(), 1000, "default", 0), 0);
    s.put(new Device("low", 3, "g", "sim", new JsonObject(), 1000, "default", 0), 0);
    s.gate((priority, round, phase) -> ProbeMode.inspect(BACKPRESSURE_HIGH, priority, round, phase));
    Map<String, Integer> count = new HashMap<>();
    for (long t = 0; t <= 20_000; t += 100) s.pollDue(t, 100).forEach(d -> count.merge(d.deviceId(), 1, Integer::sum));
    assertEquals(20, count.get("crit"), "critical at full rate: one check per second over 20 s");
    assertEquals(10, count.get("norm"), "normal at half rate");
    assertNull(count.get("low"), "low paused");
    s.gate((priority, round, phase) -> true);
    for (long t = 20_100; t <= 22_000; t += 100) s.pollDue(t, 100).forEach(d -> count.merge(d.deviceId(), 1, Integer::sum));
    assertEquals(2, count.get("low"), "back to NORMAL, the low device was never dropped from the schedule");
  }

  @Test
  void theScheduleHandsTheGateEachDevicesOwnPriorityAndPhaseAlsoAfterTheDeviceIsReplaced() {
    ProbeSchedule s = new ProbeSchedule(0, new Random(3));
    for (int i = 0; i < 200; i++) s.put(new Device("dev-" + i, 1 + i % 3, "g", "sim", new JsonObject(), 1000, "default", 0), 0);
    s.put(new Device("dev-7", 3, "g", "sim", new JsonObject(), 1000, "default", 1), 0); // replaced: priority 2 -> 3
    s.gate((priority, round, phase) -> priority == 3 && phase == 1); // only low devices of phase 1 are let through
    List<String> passed = new ArrayList<>();
    for (long t = 0; t <= 1_000; t += 50) s.pollDue(t, 1_000).forEach(d -> passed.add(d.deviceId()));
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      String id = "dev-" + i;
      int priority = i == 7 ? 3 : 1 + i % 3;
      if (priority == 3 && ProbeMode.phase(id) == 1) expected.add(id);
    }
    Collections.sort(passed);
    Collections.sort(expected);
    assertTrue(expected.size() > 15, "a fair sample: " + expected.size() + " low devices of phase 1");
    assertEquals(expected, passed, "the gate saw each device's own priority (the replaced one's new priority) and phase");
  }

  private static ProbeMode.Seen seen(long now, long depth, long ageMs, long nackAt, long heardAt) {
    return new ProbeMode.Seen(now, depth, ageMs, nackAt, heardAt, -1);
  }

  @Test
  void aLostBrokerConnectionEntersHighAfterItsThresholdAndHoldsUntilReconnected() {
    ProbeMode m = new ProbeMode(S, 0);
    assertNull(m.step(new ProbeMode.Seen(1000, 0, 0, -1, 1000, 0)), "down since start for 1 s: below the 3 s threshold");
    assertNull(m.step(new ProbeMode.Seen(2999, 0, 0, -1, 2999, 0)));
    ProbeMode.Change c = m.step(new ProbeMode.Seen(3000, 0, 0, -1, 3000, 0));
    assertEquals(BACKPRESSURE_HIGH, c.to(), "the lost connection alone enters HIGH, long before the outbox ages");
    assertEquals("broker_down", c.cause());
    assertNull(m.step(new ProbeMode.Seen(30_000, 0, 0, -1, 30_000, 0)), "still down: the mode holds past the dwell");
    assertEquals(NORMAL, m.step(new ProbeMode.Seen(31_000, 0, 0, -1, 31_000, -1)).to(), "reconnected and the dwell is over: back to NORMAL");
  }

  @Test
  void aBrokerNackEntersHighAndTheModeLeavesAfterTheWindowAndTheDwell() {
    ProbeMode m = new ProbeMode(S, 0);
    assertNull(m.step(seen(1000, 0, 0, -1, 1000)));
    ProbeMode.Change c = m.step(seen(2000, 10, 0, 1500, 2000));
    assertEquals(BACKPRESSURE_HIGH, c.to());
    assertEquals("broker_nacks", c.cause());
    assertNull(m.step(seen(11_000, 0, 0, 1500, 11_000)), "nack 9.5 s ago is inside the 10 s window");
    assertEquals(NORMAL, m.step(seen(12_000, 0, 0, 1500, 12_000)).to());
  }

  @Test
  void outboxDepthAndAgeEnterHighOrCriticalWithHysteresis() {
    ProbeMode m = new ProbeMode(S, 0);
    assertEquals(BACKPRESSURE_HIGH, m.step(seen(1000, 1000, 0, -1, -1)).to());
    assertEquals("outbox_age", m.step(seen(2000, 0, 600_000, -1, -1)).cause(), "a ten-minute-old row: CRITICAL");
    assertEquals(BACKPRESSURE_CRITICAL, m.mode());
    assertNull(m.step(seen(30_000, 0, 300_000, -1, -1)), "300 s is not below half of 600 s");
    assertEquals(BACKPRESSURE_HIGH, m.step(seen(31_000, 600, 200_000, -1, -1)).to(), "one step down");
    assertNull(m.step(seen(50_000, 600, 0, -1, -1)), "600 rows is not below half of 1000");
    assertEquals(NORMAL, m.step(seen(51_000, 400, 0, -1, -1)).to());
  }

  @Test
  void noSchedulerHeardForTheUnreachableTimeEntersHighButAProbeThatKnowsNoSchedulerDoesNot() {
    ProbeMode m = new ProbeMode(S, 0);
    assertNull(m.step(seen(14_999, 0, 0, -1, 0)));
    ProbeMode.Change c = m.step(seen(15_000, 0, 0, -1, 0));
    assertEquals(BACKPRESSURE_HIGH, c.to());
    assertEquals("unreachable", c.cause());
    assertNull(m.step(seen(100_000, 0, 0, -1, 0)), "still unreachable: stays");
    assertEquals(NORMAL, m.step(seen(101_000, 0, 0, -1, 100_500)).to(), "heard again: leaves");

    ProbeMode alone = new ProbeMode(S, 0);
    assertNull(alone.step(seen(1_000_000, 0, 0, -1, -1)), "never heard of a scheduler: nothing to lose");
  }

  @Test
  void effectiveModeIsTheMoreSevereOfFleetAndLocal() {
    assertEquals(BACKPRESSURE_HIGH, FleetMode.max(NORMAL, BACKPRESSURE_HIGH));
    assertEquals(BACKPRESSURE_CRITICAL, FleetMode.max(BACKPRESSURE_CRITICAL, BACKPRESSURE_HIGH));
    assertEquals(NORMAL, FleetMode.max(NORMAL, NORMAL));
    assertTrue(BACKPRESSURE_HIGH.above(NORMAL));
    assertFalse(NORMAL.above(NORMAL));
    assertEquals(NORMAL, FleetMode.parse("SOMETHING_NEWER", NORMAL), "an unknown mode from a newer scheduler does not stop an older probe");
  }
}
