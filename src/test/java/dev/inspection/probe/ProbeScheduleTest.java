package dev.inspection.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.inventory.Device;
import io.vertx.core.json.JsonObject;
import java.util.HashSet;
import java.util.List;
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
}
