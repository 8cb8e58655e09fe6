package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitResult;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.Channel;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.SlotHash;
import dev.inspection.messaging.Topology;
import dev.inspection.node.Node;
import dev.inspection.scheduler.SlotSwitch;
import dev.inspection.state.AlertEvent;
import dev.inspection.state.AlertRules;
import dev.inspection.state.DerivedState;
import dev.inspection.state.PayloadProfiles;
import dev.inspection.store.Db;
import dev.inspection.store.Migrations;
import dev.inspection.store.PgOptions;
import dev.inspection.worker.BatchStore;
import dev.inspection.worker.DeviceDirectory;
import dev.inspection.worker.SnapshotLoader;
import dev.inspection.worker.StatePlanner;
import io.vertx.core.Future;
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
 * The database side of a reshard's switch (seed 000 §3.4, issue 14 item 3): the leader's move of
 * {@code current_slot} at the effective time ({@link SlotSwitch}) and the fencing upsert's {@code current_slot}
 * predicate, through the worker's real {@link BatchStore} on PostgreSQL. 4 -> 8 slots.
 */
class ReshardSwitchIT {
  static final int FROM = 4;
  static final int TO = 8;

  @Test
  void theSwitchMovesEveryRemappedDeviceOnceAndThenOnlyTheNewSlotsOwnerWritesIt() throws Exception {
    try (TestEnv env = new TestEnv(FROM)) {
      Vertx vertx = Vertx.vertx();
      Pool pool = Db.pool(vertx, PgOptions.from(env.config(Map.of())), 2);
      try {
        awaitResult(Migrations.apply(vertx, pool, PgOptions.from(env.config(Map.of())), FROM, true));
        // the new version's slots exist (step 1 of the switch); every slot is worker w's at epoch 1
        env.execute("INSERT INTO $S.slot_lease (slot_id) SELECT s FROM generate_series(0, " + (TO - 1) + ") s ON CONFLICT DO NOTHING");
        env.execute("UPDATE $S.slot_lease SET owner_worker_id = 'w', lease_epoch = 1, state = 'ACTIVE'");
        BatchStore store = new BatchStore(pool, "w");

        // 2,000 devices written by their old slots' owner (version 1, 4 slots)
        long cycle = System.currentTimeMillis() - 60_000;
        Map<Integer, List<String>> bySlot = new HashMap<>();
        for (int i = 0; i < 2_000; i++) bySlot.computeIfAbsent(SlotHash.slotOf("rs-" + i, FROM), s -> new ArrayList<>()).add("rs-" + i);
        List<BatchStore.Part> parts = new ArrayList<>();
        bySlot.forEach((slot, devices) -> parts.add(new BatchStore.Part(slot, 1, plan(slot, devices, cycle))));
        awaitResult(store.commit(parts));
        assertEquals(2_000, env.queryLong("SELECT count(*) FROM $S.device_status_current"));
        long remapped = 0;
        for (int i = 0; i < 2_000; i++) if (SlotHash.slotOf("rs-" + i, FROM) != SlotHash.slotOf("rs-" + i, TO)) remapped++;

        env.execute("INSERT INTO $S.slot_map_version (version, total_slots, effective_at) VALUES (1, " + FROM + ", now() - interval '1 hour')"
            + " ON CONFLICT DO NOTHING");
        env.execute("INSERT INTO $S.slot_map_version (version, total_slots, effective_at, window_until) VALUES (2, " + TO
            + ", now(), now() + interval '1 hour')");
        SlotSwitch sw = new SlotSwitch(pool::withTransaction);
        long t0 = System.nanoTime();
        long moved = awaitResult(sw.run(2, FROM, TO));
        System.out.printf("switch 4 -> 8 slots: %d of 2000 devices moved in %d ms%n", moved, (System.nanoTime() - t0) / 1_000_000);
        assertEquals(remapped, moved);
        assertTrue(moved > 800 && moved < 1_200, "about half move when the count doubles: " + moved);
        for (Object[] r : env.query("SELECT device_id, current_slot, slot_id FROM $S.device_status_current")) {
          int home = SlotHash.slotOf((String) r[0], TO);
          assertEquals(home, ((Number) r[1]).intValue(), (String) r[0]);
          assertEquals(home, ((Number) r[2]).intValue(), (String) r[0]);
        }
        assertNotNull(env.query("SELECT switched_at FROM $S.slot_map_version WHERE version = 2").get(0)[0]);
        assertEquals(0L, awaitResult(sw.run(2, FROM, TO)), "run again (a new leader after a cut-short switch): nothing left to move");

        // every slot is at version 2 now: the giving ones (a worker reloads them and learns to forward) and the receiving ones
        assertEquals(TO, env.queryLong("SELECT count(*) FROM $S.slot_lease WHERE slot_map_version = 2"));
        // a moved device: its old slot's owner (a version-1 result in the grace window) writes history but not current
        String d = null;
        for (int i = 0; d == null; i++) if (SlotHash.slotOf("rs-" + i, FROM) != SlotHash.slotOf("rs-" + i, TO)) d = "rs-" + i;
        int oldSlot = SlotHash.slotOf(d, FROM);
        int newSlot = SlotHash.slotOf(d, TO);
        assertInstanceOf(BatchStore.Fenced.class, awaitResult(store.commit(List.of(new BatchStore.Part(oldSlot, 1, plan(oldSlot, List.of(d), cycle + 1_000)))))
            .get(oldSlot), "the giving slot's batch planned before the switch is fenced");
        Map<Integer, BatchStore.Outcome> old = awaitResult(store.commit(List.of(new BatchStore.Part(oldSlot, 2, plan(oldSlot, List.of(d), cycle + 1_000)))));
        assertInstanceOf(BatchStore.Committed.class, old.get(oldSlot));
        assertEquals(0, ((BatchStore.Committed) old.get(oldSlot)).currentRows(), "the old slot's owner no longer writes the device");
        assertEquals(cycle, env.queryLong("SELECT cycle_id FROM $S.device_status_current WHERE device_id = '" + d + "'"));
        assertEquals(1, env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id = '" + d + "' AND cycle_id = " + (cycle + 1_000)),
            "history is append-only: the old slot's result is kept there (seed 000 §3.4)");

        // the switch gave every giving slot and every receiving one (doubling: the new ones, one giver each) exactly one new epoch
        for (Object[] r : env.query("SELECT slot_id, lease_epoch FROM $S.slot_lease")) {
          assertEquals(2L, ((Number) r[1]).longValue(), "slot " + r[0]);
        }
        // the new slot's owner, at its new epoch, writes it; at the epoch it had before the switch it is fenced
        long newEpoch = env.queryLong("SELECT lease_epoch FROM $S.slot_lease WHERE slot_id = " + newSlot);
        assertInstanceOf(BatchStore.Fenced.class,
            awaitResult(store.commit(List.of(new BatchStore.Part(newSlot, 1, plan(newSlot, List.of(d), cycle + 2_000))))).get(newSlot));
        Map<Integer, BatchStore.Outcome> nu = awaitResult(store.commit(List.of(new BatchStore.Part(newSlot, newEpoch, plan(newSlot, List.of(d), cycle + 2_000)))));
        assertEquals(1, ((BatchStore.Committed) nu.get(newSlot)).currentRows());
        assertEquals(cycle + 2_000, env.queryLong("SELECT cycle_id FROM $S.device_status_current WHERE device_id = '" + d + "'"));
        assertEquals(newSlot, env.queryLong("SELECT current_slot FROM $S.device_status_current WHERE device_id = '" + d + "'"));
        // and a device that did not move is still written by its slot (the same number in both versions)
        String stay = null;
        for (int i = 0; stay == null; i++) if (SlotHash.slotOf("rs-" + i, FROM) == SlotHash.slotOf("rs-" + i, TO)) stay = "rs-" + i;
        int staySlot = SlotHash.slotOf(stay, TO);
        Map<Integer, BatchStore.Outcome> st = awaitResult(store.commit(List.of(new BatchStore.Part(staySlot, 2, plan(staySlot, List.of(stay), cycle + 3_000)))));
        assertEquals(1, ((BatchStore.Committed) st.get(staySlot)).currentRows());
      } finally {
        pool.close();
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void theLeaderSwitchesAVersionAtItsEffectiveTimeAndOnlyThen() throws Exception {
    try (TestEnv env = new TestEnv(FROM)) {
      env.start(Map.of("role", "scheduler", "node.id", env.name + "-s"));
      env.execute("INSERT INTO $S.device_status_current (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id,"
          + " status_payload) SELECT 'sw-' || i, 0, 0, 1, 1, now(), 1, 'm-' || i, '{}' FROM generate_series(0, 499) i");
      // each in its slot of the 4-slot map (CRC32 is Java's, not SQL's)
      for (int i = 0; i < 500; i++) {
        env.execute("UPDATE $S.device_status_current SET slot_id = " + SlotHash.slotOf("sw-" + i, FROM) + ", current_slot = "
            + SlotHash.slotOf("sw-" + i, FROM) + " WHERE device_id = 'sw-" + i + "'");
      }
      // a version effective in an hour: nothing moves before its time
      env.execute("INSERT INTO $S.slot_map_version (version, total_slots, effective_at, window_until) VALUES (2, " + TO
          + ", now() + interval '1 hour', now() + interval '2 hours')");
      TestEnv.awaitTrue(Duration.ofSeconds(30), "the leader is elected", () -> env.scheduler().scheduler().leading());
      long before = env.queryLong("SELECT count(*) FROM $S.device_status_current WHERE current_slot >= " + FROM);
      assertEquals(0, before, "nothing moves before the effective time");
      // its time comes
      env.execute("UPDATE $S.slot_map_version SET effective_at = now() WHERE version = 2");
      TestEnv.awaitTrue(Duration.ofSeconds(60), "the switch ran", () ->
          env.queryLong("SELECT count(*) FROM $S.slot_map_version WHERE version = 2 AND switched_at IS NOT NULL") == 1);
      for (Object[] r : env.query("SELECT device_id, current_slot FROM $S.device_status_current")) {
        assertEquals(SlotHash.slotOf((String) r[0], TO), ((Number) r[1]).intValue(), (String) r[0]);
      }
    }
  }

  @Test
  void aWorkerFollowsTheMapAndDeadLettersAResultOfTheOldVersionAfterTheWindowAsStaleSlotMap() throws Exception {
    try (TestEnv env = new TestEnv(FROM)) {
      env.start(Map.of("role", "scheduler", "node.id", env.name + "-s"));
      Node worker = env.start(Map.of("role", "worker", "node.id", env.name + "-w"));
      env.awaitConsuming();
      Topology t = env.topology();
      try (Channel ch = env.channel()) {
        // version 1 in force: a result stamped 1 is written
        String before = WorkerIT.devicesIn(1, FROM, 1, "before-").get(0);
        TestEnv.publish(ch, t, WorkerIT.envelope(before, FROM, System.currentTimeMillis(), 1, "UP"));
        TestEnv.awaitTrue(Duration.ofSeconds(30), "the version-1 result is written",
            () -> env.queryLong("SELECT count(*) FROM $S.device_status_current WHERE device_id = '" + before + "'") == 1);

        // a reshard to 8 slots whose grace window has closed; the worker reads it with its lease poll
        env.execute("INSERT INTO $S.slot_map_version (version, total_slots, effective_at, window_until) VALUES (2, " + TO
            + ", now() - interval '2 seconds', now() - interval '1 second')");
        TestEnv.awaitTrue(Duration.ofSeconds(30), "the worker read version 2", () -> worker.worker().slotMap().get().newest().version() == 2);

        // a probe that missed the switch: its version-1 result is dead-lettered, not written
        String missed = WorkerIT.devicesIn(1, FROM, 1, "missed-").get(0);
        TestEnv.publish(ch, t, WorkerIT.envelope(missed, FROM, System.currentTimeMillis(), 1, "DOWN"));
        // a probe that switched: a version-2 result of a device whose slot under 8 is slot 1 is written
        String switched = null;
        for (int i = 0; switched == null; i++) if (SlotHash.slotOf("sw2-" + i, TO) == 1) switched = "sw2-" + i;
        Envelope v2 = WorkerIT.envelope(switched, TO, System.currentTimeMillis(), 1, "UP");
        TestEnv.publish(ch, t, new Envelope(v2.messageId(), v2.deviceId(), v2.slotId(), 2, 1, 1, v2.isNode(), v2.cycleId(), v2.seq(),
            v2.collectedAt(), v2.priority(), v2.payload()));
        String written = switched;
        TestEnv.awaitTrue(Duration.ofSeconds(30), "the version-2 result is written",
            () -> env.queryLong("SELECT count(*) FROM $S.device_status_current WHERE device_id = '" + written + "'") == 1);
        TestEnv.awaitTrue(Duration.ofSeconds(30), "the version-1 result is dead-lettered as stale_slot_map",
            () -> env.queryLong("SELECT count(*) FROM $S.dead_letter WHERE reason = 'stale_slot_map'") == 1);
        assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_current WHERE device_id = '" + missed + "'"));
        assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id = '" + missed + "'"));
        String detail = (String) env.query("SELECT detail FROM $S.dead_letter WHERE reason = 'stale_slot_map'").get(0)[0];
        assertTrue(detail.contains("missed the switch"), detail);
      }
    }
  }

  /**
   * INV-10 for a moved device: its new slot's owner loaded the slot before the switch moved the device in; the
   * switch bumps that slot's epoch, so the owner's batch at the old epoch (planned without the device's counters)
   * is fenced, it loads the slot again and the device, 4 failures into the 5 a normal device needs, fires on
   * exactly the 5th, the first after the switch.
   */
  @Test
  void aMovedDeviceMidDebounceFiresOnExactlyTheNthFailureAfterTheSwitch() throws Exception {
    try (TestEnv env = new TestEnv(FROM)) {
      Vertx vertx = Vertx.vertx();
      Pool pool = Db.pool(vertx, PgOptions.from(env.config(Map.of())), 2);
      try {
        awaitResult(Migrations.apply(vertx, pool, PgOptions.from(env.config(Map.of())), FROM, true));
        env.execute("INSERT INTO $S.slot_lease (slot_id) SELECT s FROM generate_series(0, " + (TO - 1) + ") s ON CONFLICT DO NOTHING");
        env.execute("UPDATE $S.slot_lease SET owner_worker_id = 'w', lease_epoch = 1, state = 'ACTIVE'");
        BatchStore store = new BatchStore(pool, "w");
        SnapshotLoader loader = new SnapshotLoader(pool, 1_000);
        String d = null;
        for (int i = 0; d == null; i++) if (SlotHash.slotOf("deb-" + i, FROM) != SlotHash.slotOf("deb-" + i, TO)) d = "deb-" + i;
        int oldSlot = SlotHash.slotOf(d, FROM);
        int newSlot = SlotHash.slotOf(d, TO);
        int n = AlertRules.forPriority(2).offlineAfterFailures();
        // the new slot's owner loaded it before the switch: the device is not there yet
        Map<String, DerivedState> newOwnersMemory = awaitResult(loader.load(newSlot)).states();
        assertTrue(newOwnersMemory.isEmpty());

        // n - 1 failures written by the old slot's owner, each planned on the state the previous one left
        long cycle = System.currentTimeMillis() - 600_000;
        Map<String, DerivedState> oldOwnersMemory = new HashMap<>();
        for (int k = 1; k < n; k++) {
          StatePlanner.Plan p = failure(oldSlot, d, cycle + k * 1_000L, oldOwnersMemory);
          assertTrue(p.events().isEmpty(), "failure " + k + " of " + n + " fires nothing");
          assertInstanceOf(BatchStore.Committed.class, awaitResult(store.commit(List.of(new BatchStore.Part(oldSlot, 1, p)))).get(oldSlot));
          oldOwnersMemory = p.next();
        }

        env.execute("INSERT INTO $S.slot_map_version (version, total_slots, effective_at) VALUES (1, " + FROM + ", now() - interval '1 hour')"
            + " ON CONFLICT DO NOTHING");
        env.execute("INSERT INTO $S.slot_map_version (version, total_slots, effective_at, window_until) VALUES (2, " + TO
            + ", now(), now() + interval '1 hour')");
        awaitResult(new SlotSwitch(pool::withTransaction).run(2, FROM, TO));
        assertEquals(2, env.queryLong("SELECT lease_epoch FROM $S.slot_lease WHERE slot_id = " + newSlot), "the receiving slot has a new epoch");
        assertEquals(2, env.queryLong("SELECT lease_epoch FROM $S.slot_lease WHERE slot_id = " + oldSlot), "a giving slot is reloaded too");
        assertEquals("w", env.query("SELECT owner_worker_id FROM $S.slot_lease WHERE slot_id = " + newSlot).get(0)[0], "and its owner");
        assertEquals(1, env.queryLong("SELECT count(*) FROM $S.slot_lease_history WHERE slot_id = " + newSlot
            + " AND reason = 'reshard' AND old_epoch = 1 AND new_epoch = 2 AND old_state = 'ACTIVE' AND new_state = 'ACTIVE'"));
        for (Object[] r : env.query("SELECT slot_id, lease_epoch FROM $S.slot_lease")) {
          int slot = ((Number) r[0]).intValue();
          assertEquals(slot == newSlot || slot < FROM ? 2 : 1, ((Number) r[1]).intValue(),
              "the giving slots and the one that received the device have a new epoch: slot " + slot);
        }

        // the nth failure, planned by the new owner on what it loaded before the switch: that batch is fenced
        long nth = cycle + n * 1_000L;
        StatePlanner.Plan blind = failure(newSlot, d, nth, newOwnersMemory);
        assertTrue(blind.events().isEmpty(), "without the device's counters the nth failure would fire nothing");
        assertInstanceOf(BatchStore.Fenced.class, awaitResult(store.commit(List.of(new BatchStore.Part(newSlot, 1, blind)))).get(newSlot));

        // the owner follows the new epoch: it loads the slot again, now with the moved device's counters
        Map<String, DerivedState> reloaded = awaitResult(loader.load(newSlot)).states();
        assertTrue(reloaded.containsKey(d), "the moved device's derived state is loaded by its new slot's owner");
        StatePlanner.Plan p = failure(newSlot, d, nth, reloaded);
        assertEquals(1, p.events().size(), "the nth failure fires: " + p.events());
        assertEquals(AlertEvent.FIRING, p.events().get(0).type());
        Map<Integer, BatchStore.Outcome> out = awaitResult(store.commit(List.of(new BatchStore.Part(newSlot, 2, p))));
        assertEquals(1, ((BatchStore.Committed) out.get(newSlot)).currentRows());
        assertEquals(1, env.queryLong("SELECT count(*) FROM $S.alert_event WHERE device_id = '" + d + "' AND event_type = 'FIRING'"));
        assertEquals(nth, env.queryLong("SELECT cycle_id FROM $S.alert_event WHERE device_id = '" + d + "' AND event_type = 'FIRING'"));
      } finally {
        pool.close();
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      }
    }
  }

  /**
   * The same on a running worker and leader (8 -> 4 slots: the receiving slots' queues exist): the worker owns the
   * device's new slot, loaded before the switch; the leader's switch bumps that slot's epoch, the worker reloads it,
   * and the device, 4 failures into 5 under its old slot, fires on exactly the 5th, stamped with the new version.
   */
  @Test
  void onARunningWorkerAMovedDeviceMidDebounceFiresOnExactlyTheNthFailure() throws Exception {
    int from = 8;
    int to = 4;
    try (TestEnv env = new TestEnv(from); Channel ch = env.channel()) {
      ch.confirmSelect();
      Node worker = env.start(Map.of("role", "worker", "node.id", env.name + "-w"));
      env.awaitSettled(Set.of(env.name + "-w"), Duration.ofSeconds(30));
      Topology t = env.topology();
      String d = null;
      for (int i = 0; d == null; i++) if (SlotHash.slotOf("live-" + i, from) != SlotHash.slotOf("live-" + i, to)) d = "live-" + i;
      String dev = d;
      int newSlot = SlotHash.slotOf(dev, to);
      long base = System.currentTimeMillis() - 60_000;
      TestEnv.publish(ch, t, WorkerIT.envelope(dev, from, base, 1, "UP"));
      for (int k = 2; k <= 5; k++) TestEnv.publish(ch, t, WorkerIT.envelope(dev, from, base + k * 1_000L, k, "DOWN"));
      ch.waitForConfirmsOrDie(30_000);
      TestEnv.awaitTrue(Duration.ofSeconds(30), "UP and 4 failures written under the old slot",
          () -> env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id = '" + dev + "'") == 5);
      assertEquals(4, env.queryLong("SELECT (derived_snapshot->>'n')::int FROM $S.device_status_current WHERE device_id = '"
          + dev + "'"));
      long epochBefore = env.queryLong("SELECT lease_epoch FROM $S.slot_lease WHERE slot_id = " + newSlot);

      env.execute("INSERT INTO $S.slot_map_version (version, total_slots, effective_at, window_until) VALUES (2, " + to
          + ", now(), now() + interval '1 hour')");
      TestEnv.awaitTrue(Duration.ofSeconds(60), "the leader switched", () ->
          env.queryLong("SELECT count(*) FROM $S.slot_map_version WHERE version = 2 AND switched_at IS NOT NULL") == 1);
      TestEnv.awaitTrue(Duration.ofSeconds(30), "the worker read version 2", () -> worker.worker().slotMap().get().newest().version() == 2);
      assertEquals(newSlot, env.queryLong("SELECT current_slot FROM $S.device_status_current WHERE device_id = '" + dev + "'"));
      assertTrue(env.queryLong("SELECT lease_epoch FROM $S.slot_lease WHERE slot_id = " + newSlot) > epochBefore, "the receiving slot was bumped");
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.alert_event WHERE device_id = '" + dev + "'"), "not earlier");

      Envelope e = WorkerIT.envelope(dev, to, base + 6_000, 6, "DOWN");
      TestEnv.publish(ch, t, new Envelope(e.messageId(), e.deviceId(), e.slotId(), 2, 1, 1, e.isNode(), e.cycleId(), e.seq(), e.collectedAt(),
          e.priority(), e.payload()));
      ch.waitForConfirmsOrDie(30_000);
      TestEnv.awaitTrue(Duration.ofSeconds(30), "the 5th failure is written by the new slot's owner",
          () -> env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id = '" + dev + "'") == 6);
      List<Object[]> fired = env.query("SELECT alert_key, event_type, seq FROM $S.alert_event WHERE device_id = '" + dev + "'");
      assertEquals(1, fired.size(), "exactly one event: " + fired.size());
      assertEquals("FIRING", fired.get(0)[1]);
      assertEquals(6L, ((Number) fired.get(0)[2]).longValue(), "fired on the 5th failure, the first after the switch");
    }
  }

  /** One DOWN result of a normal device in {@code slot}, planned on {@code memory}. */
  private static StatePlanner.Plan failure(int slot, String device, long cycle, Map<String, DerivedState> memory) {
    Envelope e = new Envelope(Envelope.messageId("n", cycle, device, 1), device, slot, 1, 1, 1, "n", cycle, 1, Instant.ofEpochMilli(cycle),
        Priority.NORMAL, new JsonObject().put("status", "DOWN"));
    return StatePlanner.plan(List.of(e), memory, Map.of(device, new DeviceDirectory.Info(2, PayloadProfiles.DEFAULT, false)), AlertRules::forPriority);
  }

  /** A slot's plan: one UP result per device at {@code cycle}. */
  private static StatePlanner.Plan plan(int slot, List<String> devices, long cycle) {
    List<Envelope> batch = new ArrayList<>();
    Map<String, DeviceDirectory.Info> infos = new HashMap<>();
    for (String d : devices) {
      batch.add(new Envelope(Envelope.messageId("n", cycle, d, 1), d, slot, 1, 1, 1, "n", cycle, 1, Instant.ofEpochMilli(cycle), Priority.NORMAL,
          new JsonObject().put("status", "UP")));
      infos.put(d, new DeviceDirectory.Info(2, PayloadProfiles.DEFAULT, false));
    }
    return StatePlanner.plan(batch, Map.of(), infos, AlertRules::forPriority);
  }

}
