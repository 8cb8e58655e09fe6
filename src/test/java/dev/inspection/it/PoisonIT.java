package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitResult;
import static dev.inspection.it.TestEnv.awaitTrue;
import static dev.inspection.it.TestEnv.publish;
import static dev.inspection.it.WorkerIT.devicesIn;
import static dev.inspection.it.WorkerIT.envelope;
import static dev.inspection.it.WorkerIT.publishRaw;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.Channel;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.ResultBatch;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import dev.inspection.node.Node;
import dev.inspection.state.AlertRules;
import dev.inspection.state.PayloadProfiles;
import dev.inspection.store.Db;
import dev.inspection.store.Migrations;
import dev.inspection.store.PgOptions;
import dev.inspection.worker.BatchStore;
import dev.inspection.worker.CommitGroup;
import dev.inspection.worker.CommitGroup.SlotCommit;
import dev.inspection.worker.DeviceDirectory;
import dev.inspection.worker.StatePlanner;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 12 item 1 (DESIGN.md D9) on the real PostgreSQL and RabbitMQ: a result PostgreSQL refuses is set aside
 * alone ({@code db_rejected}, with its SQLSTATE) while its batch-mates of the same slot and of the other slots
 * in the same group transaction commit, and the worker neither pauses nor turns not-ready.
 *
 * <p>What PostgreSQL refuses: a CHECK constraint added to the test's own history table refusing payloads with
 * a {@code refuse_me} key (SQLSTATE 23514). The usual poison, a NUL in a JSON string (22P05), never reaches
 * the database any more (the worker refuses it first: {@code invalid_payload}), and what else was tried does
 * not fail there: the client turns {@code 1e400000} into the string "Infinity", an unpaired surrogate
 * {@code \ud800} into "?", and a collected_at before 4713 BC into -infinity.
 */
class PoisonIT {
  private static final String REFUSE = "ALTER TABLE $S.device_status_history ADD CONSTRAINT it_refuse CHECK (NOT (status_payload ? 'refuse_me'))";

  @Test
  void aResultPostgresRefusesIsDeadLetteredAloneInItsFirstDeliveryAndTheWorkerStaysReady() throws Exception {
    try (TestEnv env = new TestEnv(2); Channel ch = env.channel()) {
      // a pool of 2: one transaction in flight at a time, so batches of both slots gather into one group
      Node worker = env.start(Map.of("role", "worker", "node.id", env.name + "-w", "pg.pool.size", "2"));
      env.awaitConsuming();
      env.execute(REFUSE);
      Topology t = env.topology();
      ch.confirmSelect();

      List<String> slot0 = devicesIn(0, 2, 8, "s0-");
      List<String> slot1 = devicesIn(1, 2, 8, "s1-");
      String poisonDevice = devicesIn(0, 2, 1, "poison-").get(0);
      Envelope poison = withPayload(envelope(poisonDevice, 2, 100, 1, "UP"), new JsonObject().put("status", "UP").put("refuse_me", true));
      String nulDevice = devicesIn(1, 2, 1, "nul-").get(0);
      Envelope nul = withPayload(envelope(nulDevice, 2, 100, 1, "UP"), new JsonObject().put("status", "UP").put("note", "a\u0000b"));
      // slot 0: one v3 message with the poison in the middle of good results, and single v2 messages; slot 1: v2 messages and the NUL
      List<byte[]> v3 = new ArrayList<>();
      for (int i = 0; i < 4; i++) v3.add(envelope(slot0.get(i), 2, 100, 1, "UP").toBytes());
      v3.add(2, poison.toBytes());
      publishRaw(ch, t, 0, ResultBatch.join(v3));
      for (int i = 4; i < 8; i++) publish(ch, t, envelope(slot0.get(i), 2, 100, 1, "DOWN"));
      for (int i = 0; i < 8; i++) {
        publish(ch, t, envelope(slot1.get(i), 2, 100, 1, "UP"));
        if (i == 3) publish(ch, t, nul);
      }
      ch.waitForConfirmsOrDie(10_000);

      awaitTrue(Duration.ofSeconds(30), "16 results committed and two dead letters", () -> env.queryLong("SELECT count(*) FROM $S.device_status_history") == 16
          && env.queryLong("SELECT count(*) FROM $S.dead_letter") == 2);
      awaitTrue(Duration.ofSeconds(10), "queues empty", () -> env.readyTotal() == 0);

      assertEquals(16, env.queryLong("SELECT count(*) FROM $S.device_status_current"));
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_current WHERE device_id IN ('" + poisonDevice + "', '" + nulDevice + "')"));
      Map<String, Object[]> dead = new HashMap<>();
      for (Object[] r : env.query("SELECT reason, detail, convert_from(body, 'UTF8') FROM $S.dead_letter")) dead.put((String) r[0], r);
      assertEquals(Set.of("db_rejected", "invalid_payload"), dead.keySet());
      String detail = (String) dead.get("db_rejected")[1];
      assertTrue(detail.contains("SQLSTATE 23514") && detail.contains("it_refuse") && detail.contains(poisonDevice), detail);
      assertEquals(poison, Envelope.fromJson(new JsonObject((String) dead.get("db_rejected")[2])), "the refused result alone, not its v3 batch");
      assertTrue(((String) dead.get("invalid_payload")[1]).startsWith("payload.note contains a NUL"), (String) dead.get("invalid_payload")[1]);

      Metrics m = worker.metrics();
      assertEquals(0, m.count("worker_redelivered_total"), "set aside in its first delivery");
      assertEquals(0, m.count("worker_db_errors_total"), "not counted as a database outage: nothing paused");
      assertTrue(m.count("worker_poison_splits_total") >= 1, "split commits: " + m.count("worker_poison_splits_total"));
      assertEquals(1, m.count("worker_db_rejected_total", "sqlstate", "23514"));
      assertEquals(1, m.count("worker_dead_letters_total", "reason", "db_rejected"));
      assertTrue(worker.worker().ready());
      assertEquals(200, TestEnv.http(worker.httpPort(), "GET", "/health/ready").getKey());
      for (int s = 0; s < 2; s++) for (Priority p : Priority.values()) assertEquals(1, env.consumers(s, p), "slot " + s + " still consumed");

      // the device is not stuck: its next acceptable result commits
      publish(ch, t, envelope(poisonDevice, 2, 200, 2, "UP"));
      ch.waitForConfirmsOrDie(10_000);
      awaitTrue(Duration.ofSeconds(20), "the poison device's next result committed",
          () -> env.queryLong("SELECT count(*) FROM $S.device_status_current WHERE device_id = '" + poisonDevice + "' AND seq = 2") == 1);
    }
  }

  /**
   * The split itself, deterministically in one group: CommitGroup with one transaction in flight, a first batch
   * that holds it, then three slots' batches that wait and go together — slot 0 with the refused device, slot 1
   * clean, slot 3 whose lease is someone else's (every split commit checks the lease: it stays fenced).
   */
  @Test
  void aRefusedGroupOfThreeSlotsIsSplitCommittingAllButTheRefusedDeviceAndFencingTheSlotThatIsNotOurs() throws Exception {
    try (TestEnv env = new TestEnv(4)) {
      Vertx vertx = Vertx.vertx();
      Pool pool = Db.pool(vertx, PgOptions.from(env.config(Map.of())), 2);
      try {
        awaitResult(Migrations.apply(vertx, pool, PgOptions.from(env.config(Map.of())), 4, true));
        env.execute("UPDATE $S.slot_lease SET owner_worker_id = CASE WHEN slot_id = 3 THEN 'other' ELSE 'w' END, lease_epoch = 1, state = 'ACTIVE'");
        env.execute(REFUSE);
        Metrics metrics = Metrics.prometheus();
        CommitGroup group = new CommitGroup(vertx, new BatchStore(pool, "w"), 1, 800, env.config(Map.of()), metrics);

        Map<Integer, StatePlanner.Plan> plans = new HashMap<>();
        plans.put(2, plan(2, List.of("first"), null));
        plans.put(0, plan(0, List.of("a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"), "a6"));
        plans.put(1, plan(1, List.of("b0", "b1", "b2", "b3"), null));
        plans.put(3, plan(3, List.of("c0", "c1"), null));
        Promise<Map<Integer, SlotCommit>> all = Promise.promise();
        vertx.getOrCreateContext().runOnContext(v -> {
          Map<Integer, Future<SlotCommit>> f = new HashMap<>();
          for (int slot : List.of(2, 0, 1, 3)) f.put(slot, group.submit(null, slot, 1, plans.get(slot), false));
          Future.all(new ArrayList<>(f.values())).onComplete(ar -> {
            if (ar.failed()) all.fail(ar.cause());
            Map<Integer, SlotCommit> out = new HashMap<>();
            f.forEach((slot, r) -> out.put(slot, r.result()));
            all.tryComplete(out);
          });
        });
        Map<Integer, SlotCommit> r = awaitResult(all.future());

        assertInstanceOf(BatchStore.Committed.class, r.get(0).outcome());
        assertEquals(Set.of("a6"), r.get(0).refused().keySet());
        assertEquals("23514", r.get(0).refused().get("a6").sqlState());
        assertInstanceOf(BatchStore.Committed.class, r.get(1).outcome());
        assertEquals(Map.of(), r.get(1).refused());
        assertInstanceOf(BatchStore.Fenced.class, r.get(3).outcome());
        assertEquals(Map.of(), r.get(3).refused());
        assertInstanceOf(BatchStore.Committed.class, r.get(2).outcome());

        List<Object[]> rows = env.query("SELECT device_id FROM $S.device_status_history ORDER BY device_id");
        assertEquals(List.of("a0", "a1", "a2", "a3", "a4", "a5", "a7", "a8", "b0", "b1", "b2", "b3", "first"), rows.stream().map(x -> (String) x[0]).toList(),
            "every device but the refused one and the fenced slot's, each once");
        assertEquals(13, env.queryLong("SELECT count(*) FROM $S.device_status_current"));
        // {0,1,3} refused -> {0} refused, {1,3} -> slot 0 by device: 4 | 5 -> ... ; far fewer than one commit per device
        double splits = metrics.count("worker_poison_splits_total");
        assertTrue(splits >= 4 && splits <= 12, "split commits: " + splits);
        assertEquals(1, metrics.count("worker_db_rejected_total", "sqlstate", "23514"));
      } finally {
        pool.close();
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      }
    }
  }

  private static Envelope withPayload(Envelope e, JsonObject payload) {
    return new Envelope(e.messageId(), e.deviceId(), e.slotId(), e.slotMapVersion(), e.resourceVersion(), e.planVersion(), e.isNode(), e.cycleId(),
        e.seq(), e.collectedAt(), e.priority(), payload);
  }

  /** A slot's plan: one result per device; {@code refused} carries the key the constraint refuses. */
  private static StatePlanner.Plan plan(int slot, List<String> devices, String refused) {
    List<Envelope> batch = new ArrayList<>();
    Map<String, DeviceDirectory.Info> infos = new HashMap<>();
    long cycle = System.currentTimeMillis();
    for (String d : devices) {
      JsonObject payload = new JsonObject().put("status", "UP");
      if (d.equals(refused)) payload.put("refuse_me", true);
      batch.add(new Envelope(Envelope.messageId("n", cycle, d, 1), d, slot, 1, 1, 1, "n", cycle, 1, Instant.ofEpochMilli(cycle), Priority.NORMAL, payload));
      infos.put(d, new DeviceDirectory.Info(2, PayloadProfiles.DEFAULT, false));
    }
    return StatePlanner.plan(batch, Map.of(), infos, AlertRules::forPriority);
  }

}
