package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static dev.inspection.it.TestEnv.publish;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.ResultBatch;
import dev.inspection.messaging.SlotHash;
import dev.inspection.messaging.Topology;
import dev.inspection.node.Node;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, priority lanes under overload, on the real broker and database: a normal backlog of 20,000
 * results (or {@code -Dlanes.backlog}) waits in the slot queues when the worker starts; critical results published while it drains keep
 * a p99 lag (history {@code received_at - collected_at}) under one second; the low lane's short queue
 * refuses publishes (reject-publish) while the normal queue of the same slot still takes them. And issue 11, at capacity: when every
 * slot has a batch waiting for the worker's commit queue, critical results go ahead of them (the high lane alone, {@code CommitRoom}).
 */
class LanesIT {
  private static final String NODE = "lanesprobe";
  private static final int SLOTS = 4;
  /** The figure is 100,000: {@code -Dlanes.backlog=100000} (the suite keeps 20,000 so it stays short). */
  private static final int NORMAL_BACKLOG = Integer.getInteger("lanes.backlog", 20_000);
  private static final int LOW_MAX_LENGTH = 300;
  private static final int LOW_OFFERED = 1_000;

  private static Envelope result(String device, long seq, Priority lane) {
    return result(device, seq, lane, SLOTS);
  }

  @Test
  void criticalResultsKeepASubSecondLagThroughANormalBacklogAndLowIsRefusedFirst() throws Exception {
    Map<String, String> lanes = Map.of("queue.low.max.length", Integer.toString(LOW_MAX_LENGTH));
    try (TestEnv env = new TestEnv(SLOTS); Channel ch = env.channel()) {
      Topology t = Topology.of(env.config(lanes));
      t.declare(ch);
      ch.confirmSelect();
      AtomicInteger nacked = new AtomicInteger();
      ch.addConfirmListener(new ConfirmListener() {
        @Override
        public void handleAck(long tag, boolean multiple) {}

        @Override
        public void handleNack(long tag, boolean multiple) {
          nacked.incrementAndGet(); // one publish at a time below while it matters: never multiple
        }
      });

      // low first, all in slot 0, one confirm at a time so every refusal is counted: its short queue refuses what is over its length
      int lowSent = 0;
      for (int i = 0; lowSent < LOW_OFFERED; i++) {
        if (SlotHash.slotOf("low" + i, SLOTS) != 0) continue;
        publish(ch, t, result("low" + i, 1, Priority.LOW));
        ch.waitForConfirms(10_000);
        lowSent++;
      }
      int lowRefused = nacked.get();
      long lowQueued = env.ready(0, Priority.LOW);
      // the backlog: 20,000 normal results in the same slots, all taken by the (long) normal queues
      for (int i = 0; i < NORMAL_BACKLOG; i++) {
        publish(ch, t, result("norm" + i, 1, Priority.NORMAL));
        if (i % 1_000 == 999) ch.waitForConfirmsOrDie(30_000);
      }
      ch.waitForConfirmsOrDie(30_000);
      System.out.printf("low lane, slot 0: %d offered, %d refused by the broker (reject-publish), %d queued (limit %d); normal, all slots: %d offered, %d refused%n",
          LOW_OFFERED, lowRefused, lowQueued, LOW_MAX_LENGTH, NORMAL_BACKLOG, nacked.get() - lowRefused);
      assertEquals(LOW_OFFERED, lowRefused + lowQueued, "every low publish was either queued or refused");
      assertEquals(LOW_MAX_LENGTH, lowQueued, "the low queue stays short: the broker refused the rest");
      assertEquals(lowRefused, nacked.get(), "the normal queues refused nothing");

      // -Dlanes.fill=true: batches with critical results filled up with normal ones (worker.lane.fill.beside.high), for comparison
      Node worker = env.start(Map.of("role", "worker", "node.id", env.name + "-w", "queue.low.max.length", Integer.toString(LOW_MAX_LENGTH),
          "worker.lane.fill.beside.high", System.getProperty("lanes.fill", "false")));
      awaitTrue(Duration.ofSeconds(60), "the worker drains the backlog", () -> env.queryLong("SELECT count(*) FROM $S.device_status_history") > 0);

      // critical results, 100/s, for as long as the normal backlog lasts (at most 30 s)
      int critical = 0;
      int duringBacklog = 0;
      long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (System.nanoTime() < end) {
        long normalReady = 0;
        for (int s = 0; s < SLOTS; s++) normalReady += env.ready(s, Priority.NORMAL);
        if (normalReady == 0) break;
        for (int k = 0; k < 10; k++) publish(ch, t, result("crit" + critical++, 1, Priority.HIGH));
        ch.waitForConfirmsOrDie(10_000);
        duringBacklog += 10;
        Thread.sleep(100); // the publishing pace (100/s), not a synchronisation
      }
      int criticalSent = critical;
      long expected = NORMAL_BACKLOG + lowQueued + criticalSent;
      awaitTrue(Duration.ofSeconds(240), "every accepted result committed (" + expected + ")",
          () -> env.queryLong("SELECT count(*) FROM $S.device_status_history") == expected);

      List<Long> crit = lags(env, "crit%");
      List<Long> norm = lags(env, "norm%");
      List<Long> low = lags(env, "low%");
      System.out.printf("critical results published while the normal backlog lasted: %d%n", duringBacklog);
      print("critical", crit);
      print("normal", norm);
      print("low", low);
      for (String lane : List.of("high", "normal", "low")) {
        System.out.printf("lane %-6s taken %.0f, starvation takes %.0f%n", lane, worker.metrics().count("worker_lane_taken_total", "lane", lane),
            worker.metrics().count("worker_lane_starvation_takes_total", "lane", lane));
      }
      assertTrue(duringBacklog >= 50, "critical results went out while the backlog lasted: " + duringBacklog);
      assertEquals(criticalSent, crit.size());
      assertTrue(percentile(crit, 0.99) < 1_000, "critical p99 lag under 1 s with a normal backlog of " + NORMAL_BACKLOG + ": " + percentile(crit, 0.99) + " ms");
    }
  }

  /**
   * The backlog in the worker itself: 32 slots, each with about 1,000 normal results in v3 messages of 20, all prefetched into the
   * slots' mailboxes at once; batches of 40 messages (800 results) and one transaction at a time with room for 160 results queued
   * behind it, so every slot waits its turn for the database. Critical results published meanwhile go ahead: before the commit queue
   * had a room, each slot queued its next 800 results as soon as its last batch committed, and a critical result waited for the
   * whole queue, seconds here.
   */
  @Test
  void criticalResultsGoAheadOfEverySlotsWaitingBatchWhenTheWorkerIsTheBacklog() throws Exception {
    int slots = 32;
    int normalTotal = 32_000;
    try (TestEnv env = new TestEnv(slots); Channel ch = env.channel()) {
      Topology t = Topology.of(env.config(Map.of()));
      t.declare(ch);
      ch.confirmSelect();
      Map<Integer, List<byte[]>> bySlot = new HashMap<>();
      for (int i = 0; i < normalTotal; i++) {
        Envelope e = result("bn" + i, 1, Priority.NORMAL, slots);
        bySlot.computeIfAbsent(e.slotId(), k -> new ArrayList<>()).add(e.toBytes());
      }
      for (Map.Entry<Integer, List<byte[]>> slot : bySlot.entrySet()) {
        List<byte[]> bodies = slot.getValue();
        for (int from = 0; from < bodies.size(); from += 20) {
          ch.basicPublish(t.exchange(), t.routingKey(slot.getKey(), Priority.NORMAL), new AMQP.BasicProperties.Builder().deliveryMode(2).build(),
              ResultBatch.join(bodies.subList(from, Math.min(bodies.size(), from + 20))));
        }
      }
      ch.waitForConfirmsOrDie(30_000);
      env.start(Map.of("role", "worker", "node.id", env.name + "-w", "worker.batch.max", "40", "pg.pool.size", "2"));
      awaitTrue(Duration.ofSeconds(60), "the worker begins to commit the backlog", () -> env.queryLong("SELECT count(*) FROM $S.device_status_history") > 0);

      // critical results, 50/s over every slot, for as long as the normal backlog lasts (at most 30 s)
      int critical = 0;
      int duringBacklog = 0;
      long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (System.nanoTime() < end && env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id LIKE 'bn%'") < normalTotal) {
        for (int k = 0; k < 5; k++) publish(ch, t, result("bc" + critical++, 1, Priority.HIGH, slots));
        ch.waitForConfirmsOrDie(10_000);
        duringBacklog += 5;
        Thread.sleep(100); // the publishing pace (50/s), not a synchronisation
      }
      int criticalSent = critical;
      awaitTrue(Duration.ofSeconds(120), "every result committed (" + (normalTotal + criticalSent) + ")",
          () -> env.queryLong("SELECT count(*) FROM $S.device_status_history") == normalTotal + criticalSent);
      List<Long> crit = lags(env, "bc%");
      List<Long> norm = lags(env, "bn%");
      System.out.printf("worker backlog: critical results published while it lasted: %d%n", duringBacklog);
      print("critical", crit);
      print("normal", norm);
      assertTrue(duringBacklog >= 20, "critical results went out while the worker's backlog lasted: " + duringBacklog);
      assertEquals(criticalSent, crit.size());
      assertTrue(percentile(crit, 0.99) < 1_000, "critical p99 lag under 1 s while every slot waited its turn (normal p99 "
          + percentile(norm, 0.99) + " ms): " + percentile(crit, 0.99) + " ms");
    }
  }

  private static Envelope result(String device, long seq, Priority lane, int slots) {
    Instant now = Instant.now();
    return new Envelope(Envelope.messageId(NODE, now.toEpochMilli(), device, seq), device, SlotHash.slotOf(device, slots), 1, 1, 1, NODE,
        now.toEpochMilli(), seq, now, lane, new JsonObject().put("status", "UP"));
  }

  @Test
  void eachPriorityTravelsItsOwnLaneFromTheProbeToHistory() throws Exception {
    try (TestEnv env = new TestEnv(SLOTS)) {
      Path inventory = env.dataDir.resolve("lanes.jsonl");
      Files.writeString(inventory, String.join("\n",
          new JsonObject().put("device_id", "p1-crit").put("check_type", "sim").put("priority", 1).put("interval_ms", 300).encode(),
          new JsonObject().put("device_id", "p2-norm").put("check_type", "sim").put("priority", 2).put("interval_ms", 300).encode(),
          new JsonObject().put("device_id", "p3-low").put("check_type", "sim").put("priority", 3).put("interval_ms", 300).encode()));
      Node worker = env.start(Map.of("role", "worker", "node.id", env.name + "-w"));
      env.awaitConsuming();
      env.start(Map.of("role", "probe", "node.id", env.name + "-p", "probe.inventory.file", inventory.toString()));
      awaitTrue(Duration.ofSeconds(60), "every device has results in history", () -> env.queryLong(
          "SELECT count(DISTINCT device_id) FROM $S.device_status_history WHERE device_id IN ('p1-crit', 'p2-norm', 'p3-low')") == 3);
      for (String lane : List.of("high", "normal", "low")) {
        assertTrue(worker.metrics().count("worker_lane_taken_total", "lane", lane) >= 1, lane + " lane took the results of its device");
      }
      assertEquals(1, env.consumers(SlotHash.slotOf("p3-low", SLOTS), Priority.LOW), "the low queue has its slot owner as consumer");
    }
  }

  /** received_at - collected_at of every history row of the devices matching {@code like}, in ms, sorted. */
  private static List<Long> lags(TestEnv env, String like) throws Exception {
    List<Long> out = new ArrayList<>();
    for (Object[] r : env.query("SELECT (extract(epoch FROM received_at - collected_at) * 1000)::bigint FROM $S.device_status_history WHERE device_id LIKE '"
        + like + "'")) {
      out.add(((Number) r[0]).longValue());
    }
    Collections.sort(out);
    return out;
  }

  private static long percentile(List<Long> sorted, double q) {
    if (sorted.isEmpty()) return -1;
    return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(q * sorted.size()) - 1));
  }

  private static void print(String what, List<Long> lags) {
    System.out.printf("%-8s lag (received_at - collected_at): n=%d p50 %d ms, p99 %d ms, max %d ms%n", what, lags.size(), percentile(lags, 0.5),
        percentile(lags, 0.99), lags.isEmpty() ? -1 : lags.get(lags.size() - 1));
  }
}
