package dev.inspection.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.inventory.Device;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ProbeScheduleTest {
  private static Device dev(String id, long interval) {
    return new Device(id, 2, "g", "sim", new JsonObject(), interval, "default", 0);
  }

  @Test
  void firstChecksSpreadOverTheFirstIntervalThenRepeatWithinTheJitter() {
    ProbeSchedule s = new ProbeSchedule(10, new Random(1));
    for (int i = 0; i < 1000; i++) s.put(dev("d" + i, 10_000), 0);
    List<Device> early = s.pollDue(4_999, 10_000);
    assertTrue(early.size() > 400 && early.size() < 600, "first checks spread over the interval: " + early.size());
    Set<String> fired = new HashSet<>();
    early.forEach(d -> fired.add(d.deviceId()));
    s.pollDue(9_999, 10_000).forEach(d -> fired.add(d.deviceId()));
    assertEquals(1000, fired.size(), "every device checked within its first interval");

    ProbeSchedule one = new ProbeSchedule(10, new Random(2));
    one.put(dev("x", 10_000), 0);
    assertEquals(1, one.pollDue(10_000, 10).size());
    assertTrue(one.pollDue(8_999, 10).isEmpty(), "next check not before first + 90% of the interval");
    assertEquals(1, one.pollDue(21_000, 10).size(), "next check by first + 110% of the interval");
  }

  @Test
  void aRemovedDeviceIsNeverDueAndAReplacedOneHasOneEntry() {
    ProbeSchedule s = new ProbeSchedule(0, new Random(3));
    s.put(dev("a", 1000), 0);
    s.put(dev("b", 1000), 0);
    s.remove("a");
    s.put(dev("b", 500), 0);
    List<Device> due = s.pollDue(1_000, 100);
    assertEquals(List.of("b"), due.stream().map(Device::deviceId).toList());
  }

  @Test
  void aProbeThatFellBehindDoesNotFireABurstOfCatchUps() {
    ProbeSchedule s = new ProbeSchedule(0, new Random(4));
    s.put(dev("a", 1000), 0);
    assertEquals(1, s.pollDue(60_000, 100).size());
    assertEquals(0, s.pollDue(60_000, 100).size(), "one check, not sixty");
    assertEquals(1, s.pollDue(61_000, 100).size());
  }

  @Test
  void aDeviceIsNeverDueBeforeItsTimeAndEveryOneComesOnceAnIntervalOverLongRuns() {
    // intervals shorter and longer than the wheel's reach (about 131 s), polled at the probe's 50 ms
    ProbeSchedule s = new ProbeSchedule(0, new Random(6));
    s.put(dev("fast", 1_000), 0);
    s.put(dev("slow", 300_000), 0);
    s.put(dev("hour", 3_600_000), 0);
    java.util.Map<String, Long> last = new java.util.HashMap<>();
    java.util.Map<String, Integer> count = new java.util.HashMap<>();
    for (long t = 0; t <= 4_000_000; t += 50) {
      for (Device d : s.pollDue(t, 100)) {
        Long before = last.put(d.deviceId(), t);
        if (before != null) assertTrue(t - before >= d.intervalMs(), d.deviceId() + " due again after " + (t - before) + " ms");
        count.merge(d.deviceId(), 1, Integer::sum);
      }
    }
    assertTrue(count.get("fast") >= 3_990 && count.get("fast") <= 4_001, "fast: " + count.get("fast"));
    assertTrue(count.get("slow") >= 13 && count.get("slow") <= 14, "slow: " + count.get("slow"));
    assertTrue(count.get("hour") >= 1 && count.get("hour") <= 2, "hour: " + count.get("hour"));
  }

  @Test
  void aBoundedPollLeavesTheRestDueForTheNextAndAJumpFarAheadLosesNoDevice() {
    ProbeSchedule s = new ProbeSchedule(0, new Random(7));
    for (int i = 0; i < 1000; i++) s.put(dev("d" + i, 10_000), 0);
    Set<String> fired = new HashSet<>();
    List<Device> first = s.pollDue(10_000, 300);
    assertEquals(300, first.size(), "at most max");
    first.forEach(d -> fired.add(d.deviceId()));
    for (int k = 0; k < 5; k++) s.pollDue(10_000, 300).forEach(d -> fired.add(d.deviceId()));
    assertEquals(1000, fired.size(), "the rest at the next polls of the same instant");
    // the process was paused for an hour: every device once, not a burst of catch-ups
    List<Device> after = s.pollDue(3_610_000, 10_000);
    assertEquals(1000, after.size());
    assertEquals(0, s.pollDue(3_610_000, 10_000).size());
  }

  @Test
  void theNextLookIsWhenTheNextDeviceIsDueWithinItsBoundsAndNeverAfterADueOne() {
    ProbeSchedule s = new ProbeSchedule(0, new Random(8));
    assertEquals(1_000, s.lookInMs(0, 50, 1_000), "an empty schedule: the longest wait");
    s.put(dev("a", 10_000), 0);
    long first = s.nextDueAtMs(0, 10_000); // the first check falls somewhere in the first interval
    assertTrue(first >= 0 && first < 10_000, "first check: " + first);
    assertTrue(s.pollDue(first - 1, 10).isEmpty(), "not due before the time said");
    assertEquals(1, s.pollDue(first, 10).size(), "due at the time said");
    long next = first + 10_000; // no jitter: one interval on
    assertEquals(next, s.nextDueAtMs(next - 500, 1_000), "the device's due time");
    assertEquals(500, s.lookInMs(next - 500, 50, 1_000), "wait until it is due");
    assertEquals(50, s.lookInMs(next - 10, 50, 1_000), "not sooner than the shortest wait");
    assertEquals(1_000, s.lookInMs(first, 50, 1_000), "due further out: look again after the longest wait");
    assertEquals(first + 1_000, s.nextDueAtMs(first, 1_000));
    assertEquals(1, s.pollDue(s.nextDueAtMs(next - 500, 1_000), 10).size(), "a look at the time said finds it due");
    // a device put later, due sooner than the one known, moves the next look forward
    ProbeSchedule two = new ProbeSchedule(0, new Random(9));
    two.put(dev("slow", 600_000), 0);
    two.pollDue(600_000, 10);
    long before = two.nextDueAtMs(600_000, 1_000);
    assertEquals(601_000, before, "nothing within the horizon");
    two.put(dev("new", 300), 600_000); // first check within its first 300 ms
    long after = two.nextDueAtMs(600_000, 1_000);
    assertTrue(after >= 600_000 && after < 600_300, "the new device's first check: " + after);
    assertEquals(1, two.pollDue(Math.max(after, 600_000) + ProbeSchedule.TICK_MS, 10).size(), "it is due then");
    // a removed device's entry may make a look early, never late
    two.remove("new");
    assertTrue(two.nextDueAtMs(600_000, 1_000) <= 601_000);
  }

  private static Device critical(String id, long interval) {
    return new Device(id, 1, "g", "sim", new JsonObject(), interval, "default", 0);
  }

  /** Each device's due times over {@code untilMs}: a schedule like {@code build}'s, looked at every millisecond. */
  private static Map<String, List<Long>> dueTimes(java.util.function.Supplier<ProbeSchedule> build, long untilMs) {
    ProbeSchedule s = build.get();
    Map<String, List<Long>> due = new HashMap<>();
    for (long t = 0; t <= untilMs; t++) {
      for (Device d : s.pollDue(t, 100_000)) due.computeIfAbsent(d.deviceId(), k -> new ArrayList<>()).add(t);
    }
    return due;
  }

  /** Runs the probe's loop (look, then the next look gathered) and returns each device's check times and the number of looks. */
  private static int looks(ProbeSchedule s, long gatherMs, long untilMs, Map<String, List<Long>> checks) {
    int looks = 0;
    for (long now = 0; now <= untilMs; now += s.lookInMs(now, 50, 1_000, gatherMs, 64)) {
      looks++;
      for (Device d : s.pollDue(now, 100_000)) checks.computeIfAbsent(d.deviceId(), k -> new ArrayList<>()).add(now);
    }
    return looks;
  }

  @Test
  void anIdleScheduleGathersDueDevicesIntoFewerLooksAndNoCheckWaitsLongerThanTheGather() {
    java.util.function.Supplier<ProbeSchedule> build = () -> {
      ProbeSchedule s = new ProbeSchedule(0, new Random(21));
      for (int i = 0; i < 100; i++) s.put(dev("d" + i, 10_000), 0);
      s.put(critical("crit", 10_000), 0);
      return s;
    };
    Map<String, List<Long>> due = dueTimes(build, 60_000);
    Map<String, List<Long>> gathered = new HashMap<>();
    int gatheredLooks = looks(build.get(), 500, 60_000, gathered);
    Map<String, List<Long>> plain = new HashMap<>();
    int plainLooks = looks(build.get(), 0, 60_000, plain);
    // 101 devices every 10 s: one due about every 100 ms, so a look per device before; a look every ~500 ms gathers ~5
    assertTrue(plainLooks >= 550, "without the gather a look per due device: " + plainLooks);
    assertTrue(gatheredLooks <= 200, "gathered: about two looks a second over 60 s, got " + gatheredLooks + " (" + plainLooks + " without)");
    long worst = 0;
    long worstCritical = 0;
    for (Map.Entry<String, List<Long>> e : due.entrySet()) {
      List<Long> at = gathered.get(e.getKey());
      int n = Math.min(at.size(), e.getValue().size());
      assertTrue(n >= 5, e.getKey() + " checked " + at.size() + " times in 60 s");
      for (int i = 0; i < n; i++) {
        long delay = at.get(i) - e.getValue().get(i);
        assertTrue(delay >= 0, e.getKey() + " checked before it was due");
        if (e.getKey().equals("crit")) worstCritical = Math.max(worstCritical, delay);
        else worst = Math.max(worst, delay);
      }
    }
    assertTrue(worst <= 500 + ProbeSchedule.TICK_MS, "a check waits at most the gather (to the wheel's tick): " + worst + " ms");
    assertTrue(worst >= 200, "and some did wait (the gather is in force): " + worst + " ms");
    assertTrue(worstCritical <= 50, "a critical device is not held back (at most the shortest wait between looks): " + worstCritical + " ms");
  }

  @Test
  void aBusyScheduleLooksAsBeforeAndManyDueDevicesDoNotWaitTheWholeGather() {
    ProbeSchedule busy = new ProbeSchedule(10, new Random(22));
    for (int i = 0; i < 20_000; i++) busy.put(dev("b" + i, 10_000), 0);
    busy.pollDue(5_000, 100_000);
    assertEquals(50, busy.lookInMs(5_000, 50, 1_000, 500, 64), "2,000 due a second: something is due at every look, the shortest wait");

    ProbeSchedule burst = new ProbeSchedule(0, new Random(23));
    for (int i = 0; i < 1_000; i++) burst.put(dev("r" + i, 1_000), 0);
    burst.pollDue(200, 100_000);
    long in = burst.lookInMs(200, 50, 1_000, 500, 64);
    assertTrue(in >= 50 && in <= 64 + 2 * ProbeSchedule.TICK_MS, "1,000 due a second: 64 are due within about 64 ms, not 500: " + in);
    assertTrue(burst.pollDue(200 + in, 100_000).size() >= 64, "and the look then finds them due");

    ProbeSchedule sparse = new ProbeSchedule(0, new Random(24));
    sparse.put(dev("only", 10_000), 0);
    long first = sparse.nextDueAtMs(0, 10_000);
    long from = Math.max(0, first - 300);
    assertEquals(Math.min(1_000, first + 500 - from), sparse.lookInMs(from, 50, 1_000, 500, 64), "a lone device waits the whole gather");
    assertEquals(Math.max(50, first - from), sparse.lookInMs(from, 50, 1_000, 0, 64), "0: at its due time");
  }

  @Test
  void aDeviceWaitsAtMostATenthOfItsIntervalSoShortIntervalsKeepTheirRate() {
    // 20 devices every 200 ms (100 due a second, the fsync drill's probe): 64 are due only after 640 ms, but a device may wait
    // 20 ms, so the looks stay 50 ms apart and every device is checked every 200 ms, not once per 500 ms gather
    java.util.function.Supplier<ProbeSchedule> build = () -> {
      ProbeSchedule s = new ProbeSchedule(0, new Random(25));
      for (int i = 0; i < 20; i++) s.put(dev("f" + i, 200), 0);
      return s;
    };
    Map<String, List<Long>> due = dueTimes(build, 10_000);
    Map<String, List<Long>> checks = new HashMap<>();
    looks(build.get(), 500, 10_000, checks);
    for (Map.Entry<String, List<Long>> e : checks.entrySet()) {
      assertTrue(e.getValue().size() >= 45, e.getKey() + " checked " + e.getValue().size() + " times in 10 s at a 200 ms interval (50 due)");
      List<Long> d = due.get(e.getKey());
      for (int i = 0; i < Math.min(d.size(), e.getValue().size()); i++) {
        long delay = e.getValue().get(i) - d.get(i);
        assertTrue(delay >= 0 && delay <= 50 + ProbeSchedule.TICK_MS, e.getKey() + " waited " + delay + " ms (a tenth of 200, within the 50 ms between looks)");
      }
    }
  }
}
