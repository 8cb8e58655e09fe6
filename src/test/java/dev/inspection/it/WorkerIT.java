package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static dev.inspection.it.TestEnv.publish;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.ResultBatch;
import dev.inspection.messaging.SlotHash;
import dev.inspection.messaging.Topology;
import dev.inspection.node.Node;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The worker against the real broker and database, fed by messages the test publishes itself. */
class WorkerIT {
  private static final String NODE = "testprobe";

  static Envelope envelope(String device, int slots, long cycle, long seq, String status) {
    return new Envelope(Envelope.messageId(NODE, cycle, device, seq), device, SlotHash.slotOf(device, slots), 1, 1, 1, NODE, cycle, seq,
        Instant.ofEpochMilli(cycle), Priority.NORMAL, new JsonObject().put("status", status).put("seq", seq));
  }

  static void publishRaw(Channel ch, Topology t, int slot, byte[] body) throws Exception {
    ch.basicPublish(t.exchange(), t.routingKey(slot, Priority.NORMAL), new AMQP.BasicProperties.Builder().deliveryMode(2).build(), body);
  }

  /** Devices whose slot is {@code slot}. */
  static List<String> devicesIn(int slot, int slots, int n, String prefix) {
    List<String> out = new ArrayList<>();
    for (int i = 0; out.size() < n; i++) {
      String d = prefix + i;
      if (SlotHash.slotOf(d, slots) == slot) out.add(d);
    }
    return out;
  }

  @Test
  void redeliveryChangesNothingAndAnOlderMessageNeverOverwritesANewerOne() throws Exception {
    try (TestEnv env = new TestEnv(2); Channel ch = env.channel()) {
      Node worker = env.start(Map.of("role", "worker", "node.id", env.name + "-w"));
      env.awaitConsuming();
      Topology t = env.topology();
      ch.confirmSelect();
      List<Envelope> batch = new ArrayList<>();
      for (int d = 0; d < 50; d++) for (int s = 1; s <= 4; s++) batch.add(envelope("dev" + d, 2, 1000 + s, s, "S" + s));
      for (Envelope e : batch) publish(ch, t, e);
      ch.waitForConfirmsOrDie(10_000);
      awaitTrue(Duration.ofSeconds(30), "200 results in history", () -> env.queryLong("SELECT count(*) FROM $S.device_status_history") == 200);
      List<Object[]> before = env.query("SELECT device_id, seq, status_payload::text, writer_epoch FROM $S.device_status_current ORDER BY device_id");

      // the whole batch again, plus an older message for every device, newest first
      for (Envelope e : batch) publish(ch, t, e);
      for (int d = 0; d < 50; d++) publish(ch, t, envelope("dev" + d, 2, 500, 9, "OLD"));
      ch.waitForConfirmsOrDie(10_000);
      awaitTrue(Duration.ofSeconds(30), "older messages stored in history", () -> env.queryLong("SELECT count(*) FROM $S.device_status_history") == 250);
      awaitTrue(Duration.ofSeconds(30), "queues drained", () -> env.readyTotal() == 0);

      List<Object[]> after = env.query("SELECT device_id, seq, status_payload::text, writer_epoch FROM $S.device_status_current ORDER BY device_id");
      assertEquals(50, after.size());
      for (int i = 0; i < after.size(); i++) {
        assertEquals(List.of(before.get(i)), List.of(after.get(i)), "current status of " + after.get(i)[0] + " changed");
        assertEquals(4L, after.get(i)[1]);
      }
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_current WHERE status_payload->>'status' = 'OLD'"));
      // 450 deliveries settled by one multiple ack per channel and batch, not one ack each
      double calls = worker.metrics().count("worker_ack_calls_total");
      assertTrue(calls >= 1 && calls <= 50, "ack calls for 450 deliveries: " + calls);
    }
  }

  @Test
  void zombieWorkerCannotWriteAfterEpochBump() throws Exception {
    try (TestEnv env = new TestEnv(2); Channel ch = env.channel()) {
      // long heartbeat: the batch itself, not a renewal, must be what notices the lost lease
      Node worker = env.start(Map.of("role", "worker", "node.id", env.name + "-old", "worker.heartbeat.ms", "60000",
          "worker.lease.ttl.ms", "600000", "worker.lease.poll.ms", "60000"));
      Topology t = env.topology();
      env.awaitConsuming();
      // from here the test plays the leader itself
      env.stop(env.scheduler());
      ch.confirmSelect();
      List<String> known = devicesIn(0, 2, 5, "known");
      for (String d : known) publish(ch, t, envelope(d, 2, 10, 1, "UP"));
      ch.waitForConfirmsOrDie(10_000);
      awaitTrue(Duration.ofSeconds(20), "first results committed", () -> env.queryLong("SELECT count(*) FROM $S.device_status_current") == 5);

      // the scheduler's move: lock the lease row, bump the epoch, give slot 0 to someone else
      env.execute("BEGIN; SELECT * FROM $S.slot_lease WHERE slot_id = 0 FOR UPDATE; "
          + "UPDATE $S.slot_lease SET owner_worker_id = 'new-owner', lease_epoch = lease_epoch + 1 WHERE slot_id = 0; COMMIT");

      List<String> fresh = devicesIn(0, 2, 20, "fresh");
      List<String> other = devicesIn(1, 2, 10, "other");
      // slot 1's batches may share a group transaction with slot 0's: they must still commit
      for (int i = 0; i < fresh.size(); i++) {
        publish(ch, t, envelope(fresh.get(i), 2, 20, 1, "UP"));
        if (i < other.size()) publish(ch, t, envelope(other.get(i), 2, 20, 1, "UP"));
      }
      for (String d : known) publish(ch, t, envelope(d, 2, 20, 2, "DOWN"));
      ch.waitForConfirmsOrDie(10_000);

      awaitTrue(Duration.ofSeconds(20), "old owner stopped consuming slot 0",
          () -> env.consumers(0, Priority.NORMAL) == 0 && env.ready(0, Priority.NORMAL) == 25);
      assertTrue(worker.metrics().count("worker_fenced_total", "slot", "0") >= 1, "the batch was fenced");
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_current WHERE device_id LIKE 'fresh%'"),
          "devices the new owner never wrote got no row from the old owner");
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE cycle_id = 20 AND slot_id = 0"));
      awaitTrue(Duration.ofSeconds(20), "slot 1 still commits", () -> env.queryLong(
          "SELECT count(*) FROM $S.device_status_history WHERE device_id LIKE 'other%'") == 10);
      assertEquals(5, env.queryLong("SELECT count(*) FROM $S.device_status_current WHERE device_id LIKE 'known%' AND status_payload->>'status' = 'UP'"),
          "the known devices keep the old owner's first results");
      // slot 1 is still this worker's and still consumed
      assertEquals(1, env.consumers(1, Priority.NORMAL));
      // every message is still there for the new owner: not acked, not lost
      assertEquals(25, env.ready(0, Priority.NORMAL));
    }
  }

  @Test
  void badInputIsDeadLetteredWithItsReasonAndValidTrafficFlows() throws Exception {
    try (TestEnv env = new TestEnv(1); Channel ch = env.channel()) {
      env.start(Map.of("role", "worker", "node.id", env.name + "-w", "worker.max.message.bytes", "2048"));
      env.awaitConsuming();
      Topology t = env.topology();
      ch.confirmSelect();
      publish(ch, t, envelope("good1", 1, 1, 1, "UP"));
      publishRaw(ch, t, 0, "{not json".getBytes(StandardCharsets.UTF_8));
      publishRaw(ch, t, 0, ("{\"schema_version\":2,\"envelope\":{},\"payload\":{\"x\":\"" + "a".repeat(4000) + "\"}}").getBytes(StandardCharsets.UTF_8));
      JsonObject v4 = envelope("good2", 1, 1, 1, "UP").toJson().put("schema_version", 4);
      publishRaw(ch, t, 0, v4.encode().getBytes(StandardCharsets.UTF_8));
      JsonObject missing = envelope("good3", 1, 1, 1, "UP").toJson();
      missing.getJsonObject("envelope").remove("seq");
      publishRaw(ch, t, 0, missing.encode().getBytes(StandardCharsets.UTF_8));
      publish(ch, t, envelope("good4", 1, 1, 1, "UP"));
      ch.waitForConfirmsOrDie(10_000);

      // the scheduler keeps every dead letter with its reason for operators (and acks it from the queue)
      awaitTrue(Duration.ofSeconds(30), "four dead letters and two results", () -> env.queryLong("SELECT count(*) FROM $S.dead_letter") == 4
          && env.queryLong("SELECT count(*) FROM $S.device_status_current") == 2);
      Set<String> reasons = new HashSet<>();
      for (Object[] r : env.query("SELECT reason, detail FROM $S.dead_letter")) {
        reasons.add((String) r[0]);
        assertTrue(String.valueOf(r[1]).length() > 5, "the detail says what was wrong");
      }
      assertEquals(Set.of("malformed_json", "oversized", "unknown_schema", "missing_field"), reasons);
      assertEquals(0, env.readyTotal(), "nothing left behind in the slot queue");
    }
  }

  @Test
  void aQueueOfV2AndV3MessagesCommitsEveryGoodResultAndSetsTheBadOneAsideAlone() throws Exception {
    try (TestEnv env = new TestEnv(1); Channel ch = env.channel()) {
      env.start(Map.of("role", "worker", "node.id", env.name + "-w"));
      env.awaitConsuming();
      Topology t = env.topology();
      ch.confirmSelect();
      JsonObject noSeq = envelope("bad1", 1, 1, 1, "UP").toJson();
      noSeq.getJsonObject("envelope").remove("seq");
      for (int m = 0; m < 20; m++) {
        // v2 and v3 interleaved on one queue; one v3 batch carries a result without a seq
        publish(ch, t, envelope("v2-" + m, 1, 100, 1, "UP"));
        List<byte[]> results = new ArrayList<>();
        for (int r = 0; r < 10; r++) results.add(envelope("v3-" + m + "-" + r, 1, 100, 1, r % 2 == 0 ? "UP" : "DOWN").toBytes());
        if (m == 7) results.add(5, noSeq.encode().getBytes(StandardCharsets.UTF_8));
        publishRaw(ch, t, 0, ResultBatch.join(results));
      }
      ch.waitForConfirmsOrDie(10_000);
      awaitTrue(Duration.ofSeconds(30), "220 results committed and one dead letter", () -> env.queryLong("SELECT count(*) FROM $S.device_status_history") == 220
          && env.queryLong("SELECT count(*) FROM $S.dead_letter") == 1);
      assertEquals(220, env.queryLong("SELECT count(*) FROM $S.device_status_current"));
      assertEquals(100, env.queryLong("SELECT count(*) FROM $S.device_status_current WHERE status_payload->>'status' = 'DOWN'"));
      List<Object[]> dead = env.query("SELECT reason, convert_from(body, 'UTF8') FROM $S.dead_letter");
      assertEquals("missing_field", dead.get(0)[0]);
      assertEquals(noSeq, new JsonObject((String) dead.get(0)[1]), "the dead letter holds the bad result alone, not its batch");
      awaitTrue(Duration.ofSeconds(10), "queue empty", () -> env.readyTotal() == 0);
    }
  }

  /**
   * D1: a worker's lease renewals never wait for its own batches. A batch that waits on a lock (history locked by an
   * operator's statement, here for three lease TTLs) holds its slots' lease rows {@code FOR KEY SHARE}; the renewal
   * locked them {@code FOR UPDATE}, waited behind it, and the heartbeats' further renewals took the control pool's
   * connections until the heartbeats timed out and the leader suspected the worker (FleetModeIT's first CI run of
   * 8354453). The renewals and the heartbeats go on, the worker keeps its slots at their epochs, and the batch commits
   * once the lock is gone.
   */
  @Test
  void aBatchWaitingOnALockedTableHoldsBackNeitherTheLeaseRenewalsNorTheHeartbeats() throws Exception {
    try (TestEnv env = new TestEnv(2); Channel ch = env.channel()) {
      String id = env.name + "-w";
      // a renewal about every second: three TTLs are about eight renewals
      // history's lock timeout off: the batch waits on the lock below, as it does on a lock that is not history's (on current status)
      env.start(Map.of("role", "worker", "node.id", id, "worker.lease.ttl.ms", "3000", "worker.degraded.history.lock.timeout.ms", "0"));
      env.awaitConsuming();
      Topology t = env.topology();
      ch.confirmSelect();
      for (int slot = 0; slot < 2; slot++) publish(ch, t, envelope(devicesIn(slot, 2, 1, "first").get(0), 2, 10, 1, "UP"));
      ch.waitForConfirmsOrDie(10_000);
      awaitTrue(Duration.ofSeconds(20), "a first result of each slot committed", () -> env.queryLong("SELECT count(*) FROM $S.device_status_current") == 2);
      Map<Integer, Long> epochs = env.epochsOf(id);
      assertEquals(Set.of(0, 1), epochs.keySet());

      try (TestEnv.Held lock = env.hold("LOCK TABLE $S.device_status_history IN ACCESS EXCLUSIVE MODE")) {
        for (int slot = 0; slot < 2; slot++) for (String d : devicesIn(slot, 2, 5, "stuck")) publish(ch, t, envelope(d, 2, 20, 1, "DOWN"));
        ch.waitForConfirmsOrDie(10_000);
        String waitsForHistory = "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE NOT l.granted"
            + " AND c.relnamespace = '$S'::regnamespace AND c.relname LIKE 'device_status_history%'";
        awaitTrue(Duration.ofSeconds(20), "the worker's batch waits for history", () -> env.queryLong(waitsForHistory) > 0);
        String stuckAt = env.dbNow();
        awaitTrue(Duration.ofSeconds(30), "both leases renewed and the worker's heartbeat written 9 s (three lease TTLs) after its batch got stuck", () ->
            env.queryLong("SELECT count(*) FROM $S.slot_lease WHERE owner_worker_id = '" + id + "' AND last_renewed_at > '" + stuckAt + "'::timestamptz + interval '9 seconds'") == 2
                && env.queryLong("SELECT count(*) FROM $S.worker_heartbeat WHERE worker_id = '" + id + "' AND last_heartbeat > '" + stuckAt + "'::timestamptz + interval '9 seconds'") == 1);
        assertTrue(env.queryLong(waitsForHistory) > 0, "the batch still waits");
        assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_current WHERE cycle_id = 20"), "nothing of it committed");
        assertEquals("ACTIVE", env.workerState(id));
        assertEquals(epochs, env.epochsOf(id), "the worker keeps its slots at their epochs");
      }
      awaitTrue(Duration.ofSeconds(20), "the stuck batch commits", () -> env.queryLong("SELECT count(*) FROM $S.device_status_current WHERE cycle_id = 20") == 10);
      assertEquals(epochs, env.epochsOf(id));
      awaitTrue(Duration.ofSeconds(10), "queues empty", () -> env.readyTotal() == 0);
    }
  }

  /**
   * A renewal that waits is not issued again at every heartbeat. The test holds slot 0's lease row {@code FOR UPDATE}
   * as a leader's transaction that stopped halfway would; a renewal at every heartbeat took the control pool's three
   * connections, and the heartbeats timed out waiting for one. One renewal waits, the heartbeats go on, and the leases
   * are renewed once the row is free.
   */
  @Test
  void aRenewalThatWaitsIsNotIssuedAgainAtEveryHeartbeat() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      String id = env.name + "-w";
      // the default TTL (30 s): renewals every 10 s, the leases far from expiry while the row is held
      env.start(Map.of("role", "worker", "node.id", id));
      env.awaitConsuming();
      awaitTrue(Duration.ofSeconds(20), "both leases renewed once", () -> env.queryLong(
          "SELECT count(*) FROM $S.slot_lease WHERE owner_worker_id = '" + id + "' AND last_renewed_at IS NOT NULL") == 2);
      heartbeatsGoOnWhileOneWaits(env, id, "SELECT slot_id FROM $S.slot_lease WHERE slot_id = 0 FOR UPDATE",
          "%FROM slot_lease%FOR NO KEY UPDATE%", 15);
      String freedAt = env.dbNow();
      awaitTrue(Duration.ofSeconds(20), "both leases renewed once the row is free", () -> env.queryLong("SELECT count(*) FROM $S.slot_lease"
          + " WHERE owner_worker_id = '" + id + "' AND last_renewed_at >= '" + freedAt + "'::timestamptz") == 2);
    }
  }

  /**
   * A slot-map read that waits is not issued again at every lease poll: with {@code slot_map_version} locked (as a migration
   * waiting for its lock holds every read of the table), a read every second took the control pool's three connections within
   * seconds and the heartbeats timed out. One read waits, the heartbeats go on, and the reads resume once the table is free.
   */
  @Test
  void aSlotMapReadThatWaitsIsNotIssuedAgainAtEveryPoll() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      String id = env.name + "-w";
      env.start(Map.of("role", "worker", "node.id", id, "worker.lease.poll.ms", "300"));
      env.awaitConsuming();
      heartbeatsGoOnWhileOneWaits(env, id, "LOCK TABLE $S.slot_map_version IN ACCESS EXCLUSIVE MODE", "%FROM slot_map_version%", 8);
      awaitTrue(Duration.ofSeconds(10), "no read waits once the table is free", () -> env.queryLong(controlWaiting("%FROM slot_map_version%")) == 0);
      assertEquals("ACTIVE", env.workerState(id));
    }
  }

  /**
   * A heartbeat that waits is not issued again at every beat. The test holds the worker's own {@code worker_heartbeat} row
   * {@code FOR UPDATE}, as a leader's transaction that stopped halfway would; a heartbeat every 500 ms took the control pool's
   * three connections within two seconds, and the lease reads queued behind them. One heartbeat waits, the lease reads go
   * on, the slots keep consuming, and the heartbeats resume once the row is free.
   */
  @Test
  void aHeartbeatThatWaitsIsNotIssuedAgainAtEveryBeat() throws Exception {
    try (TestEnv env = new TestEnv(2); Channel ch = env.channel()) {
      String id = env.name + "-w";
      Node worker = env.start(Map.of("role", "worker", "node.id", id));
      env.awaitConsuming();
      Map<Integer, Long> epochs = env.epochsOf(id);
      Topology t = env.topology();
      ch.confirmSelect();
      String heartbeatWaits = controlWaiting("UPDATE worker_heartbeat SET last_heartbeat%");
      try (TestEnv.Held lock = env.hold("SELECT worker_id FROM $S.worker_heartbeat WHERE worker_id = '" + id + "' FOR UPDATE")) {
        long heldAt = System.nanoTime();
        awaitTrue(Duration.ofSeconds(20), "a heartbeat waits for the row", () -> env.queryLong(heartbeatWaits) >= 1);
        // ten beats (500 ms apart) later, the lease read of the last 300 ms poll has answered
        awaitTrue(Duration.ofSeconds(20), "a lease read answered 5 s after the row was taken", () ->
            System.nanoTime() - heldAt > 5_000_000_000L && worker.worker().leases().leaseCacheAgeMs() < 1000,
            () -> "lease cache age " + worker.worker().leases().leaseCacheAgeMs() + " ms, heartbeats waiting " + env.queryLong(heartbeatWaits));
        assertEquals(1, env.queryLong(heartbeatWaits), "one heartbeat waits, not one a beat");
        for (int slot = 0; slot < 2; slot++) publish(ch, t, envelope(devicesIn(slot, 2, 1, "beat").get(0), 2, 30, 1, "UP"));
        ch.waitForConfirmsOrDie(10_000);
        awaitTrue(Duration.ofSeconds(20), "a result of each slot committed meanwhile", () ->
            env.queryLong("SELECT count(*) FROM $S.device_status_current WHERE cycle_id = 30") == 2);
        assertEquals(epochs, env.epochsOf(id), "the worker keeps its slots at their epochs");
      }
      String freedAt = env.dbNow();
      awaitTrue(Duration.ofSeconds(20), "heartbeats written once the row is free", () -> env.queryLong("SELECT count(*) FROM $S.worker_heartbeat"
          + " WHERE worker_id = '" + id + "' AND last_heartbeat > '" + freedAt + "'::timestamptz + interval '1 second'") == 1);
      assertEquals(0, env.queryLong(heartbeatWaits));
      assertEquals("ACTIVE", env.workerState(id));
    }
  }

  /**
   * Snapshot walks that wait hold back neither the heartbeats nor the lease reads. With {@code device_status_current}
   * locked (an operator's {@code VACUUM FULL} or {@code ALTER TABLE} on it), every takeover walk waits on its page. Slots
   * that come in one lease read at a time (a rebalance's moves) each start a walk; on the control pool the walks of three
   * reads took its three connections, and the heartbeats and lease reads timed out waiting for one. The test plays the
   * leader: it hands the worker four slots, one read at a time, while the table is locked.
   */
  @Test
  void walksWaitingOnALockedCurrentTableHoldBackNeitherTheHeartbeatsNorTheLeaseReads() throws Exception {
    try (TestEnv env = new TestEnv(4).withoutScheduler()) {
      String id = env.name + "-w";
      Node worker = env.start(Map.of("role", "worker", "node.id", id));
      awaitTrue(Duration.ofSeconds(20), "the worker registered", () -> "REGISTERED".equals(env.workerState(id)));
      env.execute("UPDATE $S.worker_heartbeat SET state = 'ACTIVE' WHERE worker_id = '" + id + "'");
      String walksWait = "SELECT count(*) FROM pg_stat_activity WHERE datname = 'test' AND application_name LIKE 'inspection-worker/%'"
          + " AND wait_event_type = 'Lock' AND query LIKE '%FROM device_status_current%'";
      try (TestEnv.Held lock = env.hold("LOCK TABLE $S.device_status_current IN ACCESS EXCLUSIVE MODE")) {
        for (int slot = 0; slot < 4; slot++) {
          env.execute("UPDATE $S.slot_lease SET owner_worker_id = '" + id + "', lease_epoch = 1, state = 'LOADING_NEW' WHERE slot_id = " + slot);
          int s = slot;
          awaitTrue(Duration.ofSeconds(20), "the worker read slot " + slot + "'s lease and loads it", () -> worker.worker().leases().held().containsKey(s),
              () -> "walks waiting " + env.queryLong(walksWait) + ", lease cache age " + worker.worker().leases().leaseCacheAgeMs() + " ms");
          if (slot < 2) awaitTrue(Duration.ofSeconds(20), "its walk waits for the table", () -> env.queryLong(walksWait) == s + 1);
        }
        String heldAt = env.dbNow();
        // past the pools' 10 s wait for a connection: a walk that got none has failed, and its slots were read again
        awaitTrue(Duration.ofSeconds(30), "heartbeats written 12 s after the fourth slot came", () -> env.queryLong(
            "SELECT count(*) FROM $S.worker_heartbeat WHERE worker_id = '" + id + "' AND last_heartbeat > '" + heldAt + "'::timestamptz + interval '12 seconds'") == 1);
        assertTrue(worker.worker().leases().leaseCacheAgeMs() < 2000, "the lease reads go on: " + worker.worker().leases().leaseCacheAgeMs() + " ms");
        assertEquals(2, env.queryLong(walksWait), "two walks wait, each on a page");
        assertEquals(0, env.queryLong("SELECT count(*) FROM $S.slot_lease WHERE state = 'ACTIVE'"), "no slot consumes before its devices are in");
      }
      awaitTrue(Duration.ofSeconds(30), "every slot loaded and ACTIVE once the table is free", () -> env.activeOwners().equals(Map.of(0, id, 1, id, 2, id, 3, id)));
      awaitTrue(Duration.ofSeconds(20), "each slot consumed", () -> worker.worker().heldSlots().size() == 4);
      assertEquals("ACTIVE", env.workerState(id));
    }
  }

  /** Counts the worker's control-pool statements like {@code statementLike} that wait on a lock. */
  private static String controlWaiting(String statementLike) {
    return "SELECT count(*) FROM pg_stat_activity WHERE datname = 'test' AND application_name LIKE '%pg-worker-control'"
        + " AND wait_event_type = 'Lock' AND query LIKE '" + statementLike + "'";
  }

  /**
   * Takes a lock with {@code lockSql} in a transaction of a test connection and requires that one control-pool statement like
   * {@code statementLike} waits for it, not one per heartbeat or poll, while the worker's heartbeats go on for {@code seconds}
   * s and it stays ACTIVE; then lets go.
   */
  private static void heartbeatsGoOnWhileOneWaits(TestEnv env, String id, String lockSql, String statementLike, int seconds) throws Exception {
    try (TestEnv.Held lock = env.hold(lockSql)) {
      String heldAt = env.dbNow();
      awaitTrue(Duration.ofSeconds(20), "a control statement waits for the lock", () -> env.queryLong(controlWaiting(statementLike)) >= 1);
      awaitTrue(Duration.ofSeconds(30), "heartbeats written " + seconds + " s after the lock was taken", () -> env.queryLong(
          "SELECT count(*) FROM $S.worker_heartbeat WHERE worker_id = '" + id + "' AND last_heartbeat > '" + heldAt + "'::timestamptz + interval '"
              + seconds + " seconds'") == 1);
      assertEquals(1, env.queryLong(controlWaiting(statementLike)), "one statement waits, not one a heartbeat or poll");
      assertEquals("ACTIVE", env.workerState(id));
    }
  }
}
