package dev.inspection.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.Channel;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.SlotHash;
import dev.inspection.messaging.Topology;
import dev.inspection.node.Node;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A shrink end to end (issue 14 item 3, seed 000 §3.4): 16 -> 8 slots while a probe inspects 200 devices every second.
 * The leader switches every device of slots 8..15 to its slot under 8, an old-version result of a moved device is
 * forwarded in the window, and after the window the leader retires slots 8..15: lease rows deleted, what is left in
 * their queues (here results put there while no worker consumed) dead-lettered as {@code stale_slot_map}, queues
 * deleted. A worker and a probe started with the new count then carry on, and the probe's ledger balances.
 */
class ReshardShrinkIT {
  static final int FROM = 16;
  static final int TO = 8;

  @Test
  void sixteenToEightRetiresTheSlotsItGaveUpAndLosesNothing() throws Exception {
    try (TestEnv env = new TestEnv(FROM)) {
      Map<String, String> sched = new HashMap<>(Map.of("reshard.effective.after.ms", "3000", "reshard.window.end.ms", "45000"));
      sched.putAll(Map.of("role", "scheduler", "node.id", env.name + "-s"));
      Node s = env.start(sched);
      String w = env.name + "-w";
      Node worker = env.start(Map.of("role", "worker", "node.id", w));
      env.awaitSettled(Set.of(w), Duration.ofSeconds(60));
      String url = "http://127.0.0.1:" + s.httpPort();
      String probeId = env.name + "-p";
      Map<String, String> probeFlags = Map.of("probe.inventory.url", url, "probe.slot.map.refresh.ms", "300");
      Map<String, String> pf = new HashMap<>(probeFlags);
      pf.putAll(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "200", "probe.interval.ms", "1000", "probe.sim.fail.rate", "0"));
      Node probe = env.start(pf);
      TestEnv.awaitTrue(Duration.ofSeconds(60), "the probe's results are written", () -> env.queryLong("SELECT count(*) FROM $S.device_status_current") >= 200);
      assertTrue(env.queryLong("SELECT count(*) FROM $S.device_status_current WHERE current_slot >= " + TO) > 50, "slots 8..15 hold devices");

      Map.Entry<Integer, String> scheduled = TestEnv.http(s.httpPort(), "POST", "/api/v1/slot-map", "{\"slots\": " + TO + "}");
      assertEquals(202, scheduled.getKey(), scheduled.getValue());
      long t0 = System.nanoTime();
      TestEnv.awaitTrue(Duration.ofSeconds(60), "the leader switched", () ->
          env.queryLong("SELECT count(*) FROM $S.slot_map_version WHERE version = 2 AND switched_at IS NOT NULL") == 1);
      long switchedMs = (System.nanoTime() - t0) / 1_000_000;
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_current WHERE current_slot >= " + TO), "every device of 8..15 moved");

      // in the window: a version-1 result of a device of a retired slot is forwarded to its slot under 8
      Topology t = env.topology();
      String moved = null;
      for (int i = 0; moved == null; i++) if (SlotHash.slotOf("mv-" + i, FROM) >= TO) moved = "mv-" + i;
      String d = moved;
      try (Channel ch = env.channel()) {
        ch.confirmSelect();
        TestEnv.publish(ch, t, WorkerIT.envelope(d, FROM, System.currentTimeMillis(), 1, "UP"));
        ch.waitForConfirmsOrDie(30_000);
      }
      TestEnv.awaitTrue(Duration.ofSeconds(30), "the forwarded result is written at the device's slot under 8",
          () -> env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id = '" + d + "' AND slot_id = " + SlotHash.slotOf(d, TO)) == 1);

      // the probe stops (its outbox drained) and everything it sent is consumed; then the worker stops, and three
      // version-1 results land in retired slot queues with nobody to consume them: the leader must set them aside
      env.stop(probe);
      TestEnv.awaitTrue(Duration.ofSeconds(60), "the probe's results are consumed", () -> ready(env, FROM) == 0);
      env.stop(worker);
      List<String> leftovers = new ArrayList<>();
      for (int i = 0; leftovers.size() < 3; i++) if (SlotHash.slotOf("left-" + i, FROM) >= TO) leftovers.add("left-" + i);
      // a consumer still on one retired queue (an owner that has not closed it yet): the leader waits for it
      int held = SlotHash.slotOf(leftovers.get(0), FROM);
      int other = held == FROM - 1 ? FROM - 2 : FROM - 1;
      Channel holder = env.channel();
      holder.basicQos(10);
      List<Long> heldTags = new java.util.concurrent.CopyOnWriteArrayList<>();
      holder.basicConsume(t.queue(held, Priority.NORMAL), false, (tag, m) -> heldTags.add(m.getEnvelope().getDeliveryTag()), tag -> { });
      try (Channel ch = env.channel()) {
        ch.confirmSelect();
        for (String l : leftovers) TestEnv.publish(ch, t, WorkerIT.envelope(l, FROM, System.currentTimeMillis(), 1, "UP"));
        ch.waitForConfirmsOrDie(30_000);
      }
      assertEquals(1, env.queryLong("SELECT count(*) FROM $S.slot_map_version WHERE version = 2 AND window_until > now()"),
          "the leftovers were published inside the window (the test's timing is too tight for this machine otherwise)");
      TestEnv.awaitTrue(Duration.ofSeconds(10), "the held queue's leftover reached the test's consumer", () -> heldTags.size() == 1);

      TestEnv.awaitTrue(Duration.ofSeconds(90), "the leader deleted the retired queues nobody consumes", () -> missing(env, t.queue(other, Priority.NORMAL)));
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.slot_map_version WHERE version = 2 AND retired_at IS NOT NULL"), "not retired while consumed");
      assertTrue(!missing(env, t.queue(held, Priority.NORMAL)), "a consumed queue is not deleted");
      holder.close(); // the consumer goes: its unacked leftover is ready again
      TestEnv.awaitTrue(Duration.ofSeconds(60), "the leader retired slots 8..15", () ->
          env.queryLong("SELECT count(*) FROM $S.slot_map_version WHERE version = 2 AND retired_at IS NOT NULL") == 1);
      long retiredMs = (System.nanoTime() - t0) / 1_000_000;
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.slot_lease WHERE slot_id >= " + TO), "lease rows of retired slots deleted");
      assertEquals(TO, env.queryLong("SELECT count(*) FROM $S.slot_lease"));
      assertEquals(FROM - TO, env.queryLong("SELECT count(DISTINCT slot_id) FROM $S.slot_lease_history WHERE reason = 'retired'"));
      for (int slot = TO; slot < FROM; slot++) {
        for (Priority p : Priority.values()) assertTrue(missing(env, t.queue(slot, p)), t.queue(slot, p) + " deleted");
      }
      for (Priority p : Priority.values()) assertTrue(!missing(env, t.queue(TO - 1, p)), "slot 7's queues kept");
      TestEnv.awaitTrue(Duration.ofSeconds(30), "the leftovers are dead-lettered as stale_slot_map",
          () -> env.queryLong("SELECT count(*) FROM $S.dead_letter WHERE reason = 'stale_slot_map'") >= 3);
      for (String l : leftovers) assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id = '" + l + "'"));
      JsonObject status = new JsonObject(TestEnv.http(s.httpPort(), "GET", "/api/v1/slot-map").getValue());
      assertEquals(TO, status.getJsonObject("current").getInteger("slots"), status.encode());
      assertNull(status.getValue("change"), "nothing in progress once retired: " + status.encode());

      // nodes with the new count carry on; the probe's ledger balances (results of slots 8..15 forwarded, none stale)
      Map<String, String> eight = Map.of("slots.total", String.valueOf(TO));
      Map<String, String> wf = new HashMap<>(eight);
      wf.putAll(Map.of("role", "worker", "node.id", w + "2"));
      env.start(wf);
      Map<String, String> replay = new HashMap<>(probeFlags);
      replay.putAll(eight);
      replay.putAll(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "0"));
      env.start(replay);
      TestEnv.awaitTrue(Duration.ofSeconds(120), "everything delivered", () -> env.outboxUnconfirmed(probeId) == 0 && ready(env, TO) == 0
          && env.ledger(probeId).lost().isEmpty());
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_history h WHERE slot_id >= " + TO
          + " AND received_at > (SELECT switched_at FROM $S.slot_map_version WHERE version = 2)"), "no write at a retired slot after the switch");
      // the test's own hand-made result is not the probe's: out of its ledger
      env.execute("DELETE FROM $S.device_status_history WHERE device_id = '" + d + "'");
      env.execute("DELETE FROM $S.device_status_current WHERE device_id = '" + d + "'");
      Ledger.Report ledger = env.ledger(probeId);
      assertTrue(ledger.clean(), ledger.toString());
      assertEquals(ledger.produced(), ledger.stored(), "history holds every result once: " + ledger);
      System.out.printf("reshard %d -> %d: switched after %d ms, retired after %d ms; ledger %s%n", FROM, TO, switchedMs, retiredMs, ledger);
    }
  }

  /** Messages ready in the queues of slots 0 .. {@code slots - 1}; a deleted queue counts 0. */
  private static long ready(TestEnv env, int slots) throws Exception {
    long n = 0;
    for (int s = 0; s < slots; s++) {
      for (Priority p : Priority.values()) {
        if (!missing(env, env.topology().queue(s, p))) n += env.ready(s, p);
      }
    }
    return n;
  }

  private static boolean missing(TestEnv env, String queue) throws Exception {
    try (Channel ch = env.channel()) {
      ch.queueDeclarePassive(queue);
      return false;
    } catch (IOException e) {
      return true;
    }
  }
}
