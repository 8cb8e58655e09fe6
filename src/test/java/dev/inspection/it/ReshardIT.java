package dev.inspection.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.Channel;
import dev.inspection.messaging.SlotHash;
import dev.inspection.messaging.Topology;
import dev.inspection.node.Node;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A reshard under load, end to end (issue 14 item 3, seed 000 §3.4): 64 -> 128 slots while a probe inspects 400
 * devices every second through two workers. The leader schedules version 2 and creates the new slots' leases, the
 * workers open them (declaring their queues) before the effective time, the leader switches current_slot slot by
 * slot, the probe follows the map from its scheduler and stamps version 2, old-version results of moved devices are
 * forwarded to their new slot, and after the window a version-1 result is dead-lettered as stale_slot_map.
 */
class ReshardIT {
  static final int FROM = 64;
  static final int TO = 128;

  @Test
  void sixtyFourToOneHundredTwentyEightUnderLoadLosesNothingAndNoDeviceHasTwoWriters() throws Exception {
    try (TestEnv env = new TestEnv(FROM)) {
      env.slotsGrowTo(TO);
      Map<String, String> timing = Map.of("reshard.effective.after.ms", "25000", "reshard.window.end.ms", "70000");
      Map<String, String> sched = new HashMap<>(timing);
      sched.putAll(Map.of("role", "scheduler", "node.id", env.name + "-s"));
      Node s = env.start(sched);
      env.start(Map.of("role", "worker", "node.id", env.name + "-w1"));
      env.start(Map.of("role", "worker", "node.id", env.name + "-w2"));
      env.awaitSettled(Set.of(env.name + "-w1", env.name + "-w2"), Duration.ofSeconds(180));
      String url = "http://127.0.0.1:" + s.httpPort();
      String probeId = env.name + "-p";
      Map<String, String> probeFlags = Map.of("probe.inventory.url", url, "probe.slot.map.refresh.ms", "300");
      Map<String, String> pf = new HashMap<>(probeFlags);
      pf.putAll(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "400", "probe.interval.ms", "1000", "probe.sim.fail.rate", "0"));
      Node probe = env.start(pf);
      TestEnv.awaitTrue(Duration.ofSeconds(60), "the probe's results are written", () -> env.queryLong("SELECT count(*) FROM $S.device_status_current") >= 400);

      // a moved device, 4 failures into the 5 a normal device needs, written by its old slot's owner
      Topology t = env.topology();
      String deb = null;
      for (int i = 0; deb == null; i++) if (SlotHash.slotOf("deb-" + i, FROM) != SlotHash.slotOf("deb-" + i, TO)) deb = "deb-" + i;
      String d = deb;
      int oldSlot = SlotHash.slotOf(d, FROM);
      int newSlot = SlotHash.slotOf(d, TO);
      long base = System.currentTimeMillis() - 60_000;
      try (Channel ch = env.channel()) {
        ch.confirmSelect();
        TestEnv.publish(ch, t, WorkerIT.envelope(d, FROM, base, 1, "UP"));
        for (int k = 2; k <= 5; k++) TestEnv.publish(ch, t, WorkerIT.envelope(d, FROM, base + k * 1_000L, k, "DOWN"));
        ch.waitForConfirmsOrDie(30_000);
      }
      TestEnv.awaitTrue(Duration.ofSeconds(30), "UP and 4 failures written under the old slot",
          () -> env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id = '" + d + "'") == 5);

      Map.Entry<Integer, String> scheduled = TestEnv.http(s.httpPort(), "POST", "/api/v1/slot-map", "{\"slots\": " + TO + "}");
      assertEquals(202, scheduled.getKey(), scheduled.getValue());
      long t0 = System.nanoTime();
      // every new slot is owned, ACTIVE and consumed (its queues declared by its owner), on a quiet machine before the effective time
      TestEnv.awaitTrue(Duration.ofSeconds(90), "all 128 slots ACTIVE", () -> env.activeOwners().size() == TO);
      long openedMs = (System.nanoTime() - t0) / 1_000_000;
      // the API and /metrics follow the lease rows, not the nodes' slots.total (64 until they restart)
      TestEnv.awaitTrue(Duration.ofSeconds(30), "a new slot's history is served", () -> TestEnv.http(s.httpPort(), "GET", "/api/v1/slots/100/history").getKey() == 200);
      TestEnv.awaitTrue(Duration.ofSeconds(30), "a new slot's backlog is in /metrics", () -> TestEnv.http(s.httpPort(), "GET", "/metrics").getValue().lines()
          .anyMatch(l -> l.startsWith("queue_backlog_messages{") && l.contains("slot=\"100\"")));
      TestEnv.awaitTrue(Duration.ofSeconds(90), "the leader switched", () ->
          env.queryLong("SELECT count(*) FROM $S.slot_map_version WHERE version = 2 AND switched_at IS NOT NULL") == 1);
      assertEquals(1, env.queryLong("SELECT count(*) FROM $S.slot_map_version WHERE version = 2 AND switched_at >= effective_at"), "not before its time");
      long switchedMs = (System.nanoTime() - t0) / 1_000_000;
      assertEquals(newSlot, env.queryLong("SELECT current_slot FROM $S.device_status_current WHERE device_id = '" + d + "'"));
      // the leader counts the slots' devices again once they are in their new slots (its count of 10 min is not up)
      TestEnv.awaitTrue(Duration.ofSeconds(30), "the leader counted the devices after the switch", () -> TestEnv.http(s.httpPort(), "GET", "/metrics")
          .getValue().lines().anyMatch(l -> l.startsWith("scheduler_device_counts_total{") && l.contains("reason=\"switch\"") && !l.endsWith(" 0.0")));

      // the 5th failure arrives stamped with version 1 at the old slot (a probe's backlog): forwarded, it fires on exactly the 5th
      try (Channel ch = env.channel()) {
        ch.confirmSelect();
        TestEnv.publish(ch, t, WorkerIT.envelope(d, FROM, base + 6_000, 6, "DOWN"));
        ch.waitForConfirmsOrDie(30_000);
      }
      TestEnv.awaitTrue(Duration.ofSeconds(30), "the forwarded 5th failure is written by the new slot's owner",
          () -> env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id = '" + d + "' AND seq = 6 AND slot_id = " + newSlot) == 1);
      List<Object[]> fired = env.query("SELECT event_type, seq FROM $S.alert_event WHERE device_id = '" + d + "'");
      assertEquals(1, fired.size(), "exactly one event");
      assertEquals("FIRING", fired.get(0)[0]);
      assertEquals(6L, ((Number) fired.get(0)[1]).longValue(), "fired on the 5th failure, the first after the switch");

      // the probe follows the map: results hashed with 128 slots reach the new slots
      TestEnv.awaitTrue(Duration.ofSeconds(30), "the probe stamps version 2", () ->
          env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE slot_id >= " + FROM + " AND device_id LIKE 'sim-%'") > 0);

      // after the window: a result of version 1 (a probe that missed the switch) is dead-lettered, not written
      TestEnv.awaitTrue(Duration.ofSeconds(60), "the window closed", () ->
          env.queryLong("SELECT count(*) FROM $S.slot_map_version WHERE version = 2 AND window_until < now()") == 1);
      long windowMs = (System.nanoTime() - t0) / 1_000_000;
      String late = null;
      for (int i = 0; late == null; i++) if (SlotHash.slotOf("late-" + i, FROM) != SlotHash.slotOf("late-" + i, TO)) late = "late-" + i;
      String missed = late;
      try (Channel ch = env.channel()) {
        ch.confirmSelect();
        TestEnv.publish(ch, t, WorkerIT.envelope(missed, FROM, System.currentTimeMillis(), 1, "UP"));
        ch.waitForConfirmsOrDie(30_000);
      }
      TestEnv.awaitTrue(Duration.ofSeconds(30), "the late version-1 result is dead-lettered as stale_slot_map",
          () -> env.queryLong("SELECT count(*) FROM $S.dead_letter WHERE reason = 'stale_slot_map'") >= 1);
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id = '" + missed + "'"));

      // the ledger of the probe's results (the test's own hand-made ones are not the probe's: out of its view)
      env.execute("DELETE FROM $S.device_status_history WHERE device_id LIKE 'deb-%'");
      env.execute("DELETE FROM $S.device_status_current WHERE device_id LIKE 'deb-%'");
      Map<String, String> replay = new HashMap<>(probeFlags);
      replay.put("slots.total", String.valueOf(TO));
      Ledger.Report ledger = env.drainAndBalance(probe, probeId, replay);

      // no device had two writers: each moved device's history rows are its old slot's, then its new slot's, never back
      Map<String, List<Integer>> bySlot = new HashMap<>();
      for (Object[] r : env.query("SELECT device_id, slot_id FROM $S.device_status_history WHERE device_id LIKE 'sim-%' ORDER BY device_id, received_at, cycle_id")) {
        bySlot.computeIfAbsent((String) r[0], k -> new ArrayList<>()).add(((Number) r[1]).intValue());
      }
      int moved = 0;
      for (Map.Entry<String, List<Integer>> e : bySlot.entrySet()) {
        int from = SlotHash.slotOf(e.getKey(), FROM);
        int to = SlotHash.slotOf(e.getKey(), TO);
        if (from != to) moved++;
        boolean switchedOver = false;
        for (int slot : e.getValue()) {
          assertTrue(slot == from || slot == to, e.getKey() + " written by slot " + slot);
          if (slot == to && from != to) switchedOver = true;
          else if (switchedOver) throw new AssertionError(e.getKey() + " written by its old slot after its new one: " + e.getValue());
        }
      }
      long forwarded = env.queryLong("SELECT count(*) FROM $S.device_status_history h WHERE h.device_id LIKE 'sim-%'");
      System.out.printf("reshard %d -> %d under load: new slots ACTIVE after %d ms, switched after %d ms, window closed after %d ms;"
          + " %d of %d devices moved; ledger %s; history rows %d%n", FROM, TO, openedMs, switchedMs, windowMs, moved, bySlot.size(), ledger, forwarded);
      assertTrue(moved > 150, "about half the devices moved: " + moved);
    }
  }
}
