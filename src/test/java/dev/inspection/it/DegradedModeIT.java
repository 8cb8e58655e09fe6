package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static dev.inspection.it.TestEnv.publish;
import static dev.inspection.it.WorkerIT.devicesIn;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.SlotHash;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import dev.inspection.node.Node;
import dev.inspection.worker.DegradedMonitor;
import dev.inspection.worker.Spill;
import dev.inspection.worker.StatePlanner;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 12 item 5 (seed 000 §7.5) on the real PostgreSQL and RabbitMQ: a worker whose commits stall (a test
 * connection holds {@code LOCK TABLE device_status_history IN ACCESS EXCLUSIVE MODE}) enters the DB-degraded write
 * mode; while degraded, current status, derived state and alerts are written for every device and history only for
 * critical results, the rest going to the back-fill queue; after the dwell it leaves the mode and the back-fill makes
 * history and rollups complete — every published result exactly once.
 */
class DegradedModeIT {
  private static final int SLOTS = 2;
  private static final Map<String, String> FAST = Map.ofEntries(Map.entry("role", "worker"), Map.entry("worker.degraded.window.ms", "60000"),
      Map.entry("worker.degraded.min.commits", "3"), Map.entry("worker.degraded.enter.p99.ms", "1500"), Map.entry("worker.degraded.exit.p99.ms", "1000"),
      Map.entry("worker.degraded.dwell.ms", "6000"), Map.entry("worker.degraded.tick.ms", "200"), Map.entry("worker.backfill.interval.ms", "100"),
      Map.entry("alert.offline.failures.p1", "1"), Map.entry("alert.offline.failures.p2", "1"));

  private static Envelope result(String device, Priority p, long cycle, String status) {
    return new Envelope(Envelope.messageId("it", cycle, device, 1), device, SlotHash.slotOf(device, SLOTS), 1, 1, 1, "it", cycle, 1,
        Instant.ofEpochMilli(cycle), p, new JsonObject().put("status", status));
  }

  /** A worker on {@link #FAST} and {@code extra}, consuming its slots. */
  private static Node startWorker(TestEnv env, Map<String, String> extra) throws Exception {
    Map<String, String> cfg = new HashMap<>(FAST);
    cfg.put("node.id", env.name + "-w");
    cfg.putAll(extra);
    Node worker = env.start(cfg);
    env.awaitConsuming();
    return worker;
  }

  /** Three critical and six normal devices in each slot. */
  private static Map<String, Priority> fleet() {
    Map<String, Priority> devices = new HashMap<>();
    for (int s = 0; s < SLOTS; s++) {
      devicesIn(s, SLOTS, 3, "crit-").forEach(d -> devices.put(d, Priority.HIGH));
      devicesIn(s, SLOTS, 6, "norm-").forEach(d -> devices.put(d, Priority.NORMAL));
    }
    return devices;
  }

  /** {@code devices} at {@code p}. */
  private static Map<String, Priority> at(List<String> devices, Priority p) {
    Map<String, Priority> out = new HashMap<>();
    devices.forEach(d -> out.put(d, p));
    return out;
  }

  /** One result of each device at {@code cycle}, published and confirmed by the broker; each is added to {@code published}. */
  private static void wave(Channel ch, Topology t, Map<String, Priority> devices, long cycle, String status, List<Envelope> published) throws Exception {
    for (Map.Entry<String, Priority> d : devices.entrySet()) {
      Envelope e = result(d.getKey(), d.getValue(), cycle, status);
      publish(ch, t, e);
      published.add(e);
    }
    ch.waitForConfirmsOrDie(10_000);
  }

  @Test
  void stalledCommitsEnterDegradedWhichWritesCurrentAndAlertsForAllButHistoryOnlyForCriticalThenBackFillCompletesEveryResultOnce() throws Exception {
    try (TestEnv env = new TestEnv(SLOTS); Channel ch = env.channel()) {
      // the commits wait on the lock below (a stall of any kind)
      Node worker = startWorker(env, Map.of("worker.degraded.history.lock.timeout.ms", "0"));
      Topology t = env.topology();
      ch.confirmSelect();
      Map<String, Priority> devices = fleet();
      long base = System.currentTimeMillis() - 60_000;
      List<Envelope> published = new ArrayList<>();
      DegradedMonitor mode = worker.worker().degraded();

      // wave A while history is locked: the commits stall until the lock goes, and the mode turns DEGRADED meanwhile
      try (TestEnv.Held lock = env.hold("LOCK TABLE $S.device_status_history IN ACCESS EXCLUSIVE MODE")) {
        wave(ch, t, devices, base, "UP", published);
        awaitTrue(Duration.ofSeconds(20), "DEGRADED entered on a commit stalled over 1.5 s", mode::degraded);
        assertTrue(mode.status().reason().startsWith("a commit in flight for"), mode.status().reason());
      }
      awaitTrue(Duration.ofSeconds(20), "wave A committed", () -> env.queryLong("SELECT count(*) FROM $S.device_status_current") == devices.size());

      // a slot's first batch is one message: the rest of wave A committed after DEGRADED began, and spilled too
      double spilledBeforeB = worker.metrics().count("worker_spilled_total");
      // wave B while DEGRADED: every device DOWN (an alert each)
      wave(ch, t, devices, base + 1000, "DOWN", published);
      long critical = devices.values().stream().filter(p -> p == Priority.HIGH).count();
      long normal = devices.size() - critical;
      awaitTrue(Duration.ofSeconds(20), "wave B current for every device", () -> env.queryLong(
          "SELECT count(*) FROM $S.device_status_current WHERE cycle_id = " + (base + 1000)) == devices.size());
      long historyB = env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE cycle_id = " + (base + 1000));
      long criticalB = env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE cycle_id = " + (base + 1000) + " AND retention_class = 1");
      long alertsOpen = env.queryLong("SELECT count(*) FROM $S.alert_current WHERE state = 'ACTIVE'");
      long spillDepth = backfillDepth(env, t);
      String heartbeatMode = (String) env.query("SELECT backlog_metrics->'degraded'->>'mode' FROM $S.worker_heartbeat WHERE worker_id = '" + env.name
          + "-w'").get(0)[0];
      Map.Entry<Integer, String> ready = TestEnv.http(worker.httpPort(), "GET", "/health/ready");
      assertTrue(mode.degraded(), "all of the above was seen while still DEGRADED (the back-fill only runs in NORMAL)");
      assertEquals(200, ready.getKey(), "degraded is not unready: the worker still commits");
      JsonObject detail = new JsonObject(ready.getValue()).getJsonObject("details").getJsonObject("worker").getJsonObject("degraded");
      assertEquals("DEGRADED", detail.getString("mode"));
      assertTrue(detail.getString("reason").startsWith("a commit in flight for"), detail.encode());
      assertEquals(critical, historyB, "wave B history: critical results only");
      assertEquals(critical, criticalB);
      assertEquals(devices.size(), alertsOpen, "alert_current for every device, critical or not");
      assertTrue(spillDepth >= 1, "the non-critical rows wait in the back-fill queue: " + spillDepth);
      assertEquals("DEGRADED", heartbeatMode, "the heartbeat (GET /api/v1/workers: backlog.degraded) reports the mode");
      Metrics m = worker.metrics();
      assertEquals(normal, m.count("worker_spilled_total") - spilledBeforeB, "every non-critical result of wave B spilled, once");
      assertEquals(1.0, m.registry().find("worker_degraded").gauge().value());
      assertTrue(TestEnv.hasSample(TestEnv.http(worker.httpPort(), "GET", "/metrics").getValue(), "worker_degraded", "1.0"));

      // recovery: NORMAL after the dwell, then the back-fill drains the queue into history and rollups
      awaitTrue(Duration.ofSeconds(30), "NORMAL again after the dwell", () -> !mode.degraded());
      assertTrue(mode.status().reason().startsWith("healthy for"), mode.status().reason());
      awaitTrue(Duration.ofSeconds(30), "back-fill done", () -> backfillDepth(env, t) == 0
          && env.queryLong("SELECT count(*) FROM $S.device_status_history") == published.size());
      assertEquals(published.size(), env.queryLong("SELECT count(DISTINCT (device_id, cycle_id, seq)) FROM $S.device_status_history"),
          "history holds every published result exactly once");
      assertEquals(published.size(), env.queryLong("SELECT coalesce(sum(sample_count), 0) FROM $S.device_status_rollup_1m"),
          "the rollups count every published result exactly once");
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_rollup_1m WHERE sample_count <> cardinality(seen_seq)"));
      assertEquals(m.count("worker_spilled_total"), m.count("worker_backfilled_total"), "every spilled result back-filled (wave B's and what of wave A spilled)");
      assertEquals(1, m.count("worker_degraded_changes_total", "to", "DEGRADED"));
      assertEquals(1, m.count("worker_degraded_changes_total", "to", "NORMAL"));
      assertEquals(0, env.readyTotal());
      assertEquals(0, env.deadLetterCount());
    }
  }

  /**
   * A lock on history held longer than {@code worker.degraded.history.lock.timeout.ms} (an operator's {@code ALTER TABLE} or {@code VACUUM
   * FULL}): while it lasts, current status, derived state and alerts are written for every device, critical ones too, without the mode
   * changing, and every history row goes to the back-fill queue; once the lock goes, with no live result to try history, the back-fill's
   * probe finds it free and writes them, every result exactly once. Until 2026-12-07 nothing committed while such a lock lasted: the
   * transactions in flight waited on it and every later batch waited for them.
   */
  @Test
  void aLockOnHistoryHoldsBackNeitherCurrentStatusNorAlertsAndTheBackFillWritesItsRowsOnceItGoes() throws Exception {
    try (TestEnv env = new TestEnv(SLOTS); Channel ch = env.channel()) {
      // the mode stays NORMAL (enter p99 60 s): the lock timeout alone carries the lock
      Node worker = startWorker(env, Map.of("worker.degraded.history.lock.timeout.ms", "1000", "worker.degraded.enter.p99.ms", "60000"));
      Topology t = env.topology();
      ch.confirmSelect();
      Map<String, Priority> devices = fleet();
      long base = System.currentTimeMillis() - 60_000;
      List<Envelope> published = new ArrayList<>();
      wave(ch, t, devices, base, "UP", published);
      awaitTrue(Duration.ofSeconds(20), "wave A in history", () -> env.queryLong("SELECT count(*) FROM $S.device_status_history") == devices.size());
      Metrics m = worker.metrics();
      DegradedMonitor mode = worker.worker().degraded();

      try (TestEnv.Held lock = env.hold("LOCK TABLE $S.device_status_history IN ACCESS EXCLUSIVE MODE")) {
        long t0 = System.currentTimeMillis();
        wave(ch, t, devices, base + 1000, "DOWN", published);
        // history is not read here: the test's own query would wait on the lock
        awaitTrue(Duration.ofSeconds(20), "wave B's current status and alerts for every device while history is locked", () -> env.queryLong(
            "SELECT count(*) FROM $S.device_status_current WHERE cycle_id = " + (base + 1000)) == devices.size()
            && env.queryLong("SELECT count(*) FROM $S.alert_current WHERE state = 'ACTIVE'") == devices.size());
        long took = System.currentTimeMillis() - t0;
        awaitTrue(Duration.ofSeconds(10), "every result of wave B spilled", () -> m.count("worker_spilled_total") == devices.size());
        assertEquals(1.0, m.registry().find("worker_history_locked").gauge().value(), "history counts as locked");
        assertTrue(TestEnv.hasSample(TestEnv.http(worker.httpPort(), "GET", "/metrics").getValue(), "worker_history_locked", "1.0"));
        assertTrue(backfillDepth(env, t) >= 1, "the rows wait in the back-fill queue");
        awaitTrue(Duration.ofSeconds(10), "the heartbeat (GET /api/v1/workers: backlog.degraded.history_locked) says so", () -> "true".equals(
            env.query("SELECT backlog_metrics->'degraded'->>'history_locked' FROM $S.worker_heartbeat WHERE worker_id = '" + env.name + "-w'").get(0)[0]));
        assertTrue(!mode.degraded(), "the mode did not change: " + mode.status().reason());
        assertEquals(0, env.readyTotal(), "nothing waits in the slot queues");
        System.out.printf("history locked: wave B's current status and alerts of %d devices written in %d ms%n", devices.size(), took);
      }
      awaitTrue(Duration.ofSeconds(30), "the back-fill writes every spilled row once the lock is gone", () -> backfillDepth(env, t) == 0
          && env.queryLong("SELECT count(*) FROM $S.device_status_history") == published.size());
      assertEquals(0.0, m.registry().find("worker_history_locked").gauge().value(), "history free again");
      assertEquals(published.size(), env.queryLong("SELECT count(DISTINCT (device_id, cycle_id, seq)) FROM $S.device_status_history"),
          "history holds every published result exactly once");
      assertEquals(devices.values().stream().filter(p -> p == Priority.HIGH).count() * 2,
          env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE retention_class = 1"), "the critical rows keep their class");
      assertEquals(published.size(), env.queryLong("SELECT coalesce(sum(sample_count), 0) FROM $S.device_status_rollup_1m"),
          "the rollups count every published result exactly once");
      assertEquals(m.count("worker_spilled_total"), m.count("worker_backfilled_total"));
      assertEquals(0, m.count("worker_degraded_changes_total", "to", "DEGRADED"));
      assertEquals(0, env.readyTotal());
      assertEquals(0, env.deadLetterCount());
    }
  }

  /**
   * The spill publish fails (the back-fill queue was deleted: the publish comes back unroutable): the held-back rows
   * are written into history at once instead, and only then are the deliveries acked — nothing lost, nothing
   * redelivered, no delivery spent towards the delivery limit.
   */
  @Test
  void aFailedSpillPublishWritesTheHeldBackRowsAtOnceSoNothingIsLostOrRedelivered() throws Exception {
    try (TestEnv env = new TestEnv(SLOTS); Channel ch = env.channel()) {
      // the commits wait on the lock below (a stall of any kind)
      Node worker = startWorker(env, Map.of("worker.degraded.history.lock.timeout.ms", "0"));
      Topology t = env.topology();
      ch.confirmSelect();
      List<String> critical = new ArrayList<>();
      List<String> normal = new ArrayList<>();
      for (int s = 0; s < SLOTS; s++) {
        critical.addAll(devicesIn(s, SLOTS, 2, "crit-"));
        normal.addAll(devicesIn(s, SLOTS, 4, "norm-"));
      }
      long base = System.currentTimeMillis() - 60_000;
      List<Envelope> published = new ArrayList<>();
      DegradedMonitor mode = worker.worker().degraded();
      // enter DEGRADED on critical results only (nothing of them is ever spilled)
      try (TestEnv.Held lock = env.hold("LOCK TABLE $S.device_status_history IN ACCESS EXCLUSIVE MODE")) {
        wave(ch, t, at(critical, Priority.HIGH), base, "UP", published);
        awaitTrue(Duration.ofSeconds(20), "DEGRADED", mode::degraded);
      }
      try (Channel c = env.channel()) {
        c.queueDelete(t.backfillQueue());
      }
      wave(ch, t, at(normal, Priority.NORMAL), base + 1000, "UP", published);
      Metrics m = worker.metrics();
      awaitTrue(Duration.ofSeconds(20), "every result in history and the queues empty",
          () -> env.queryLong("SELECT count(*) FROM $S.device_status_history") == published.size() && env.readyTotal() == 0);
      assertTrue(mode.degraded(), "written while still DEGRADED: by the write-through, not by a NORMAL redelivery");
      assertEquals(normal.size(), m.count("worker_spill_written_through_total"));
      assertEquals(0, m.count("worker_spilled_total"), "nothing counted as spilled: no confirm");
      assertEquals(0, m.count("worker_redelivered_total"), "acked after the write-through: no redelivery");
      assertEquals(0, m.count("worker_db_errors_total"));
      assertEquals(published.size(), env.queryLong("SELECT count(DISTINCT (device_id, cycle_id, seq)) FROM $S.device_status_history"));
      assertEquals(published.size(), env.queryLong("SELECT coalesce(sum(sample_count), 0) FROM $S.device_status_rollup_1m"),
          "the rollups count every result exactly once");
      assertEquals(0, env.deadLetterCount());
    }
  }

  /**
   * The back-fill on its own: the same spilled batch taken twice (a redelivery after a lost ack) is counted once in
   * history and rollups — a row the history policy did not keep still counts in the rollups — and a body that is no
   * spilled batch is rejected to the dead-letter queue, not retried forever.
   */
  @Test
  void aSpilledBatchBackFilledTwiceCountsOnceAndABodyThatIsNoSpillIsDeadLettered() throws Exception {
    try (TestEnv env = new TestEnv(SLOTS); Channel ch = env.channel()) {
      Node worker = startWorker(env, Map.of());
      Topology t = env.topology();
      long base = System.currentTimeMillis() - 60_000;
      List<StatePlanner.HistoryRow> rows = new ArrayList<>();
      List<String> devices = devicesIn(0, SLOTS, 5, "bf-");
      for (int i = 0; i < devices.size(); i++) {
        Envelope e = result(devices.get(i), Priority.NORMAL, base + i, "UP");
        rows.add(new StatePlanner.HistoryRow(e, e.payload(), 2, i != 4)); // the last one: rollups only
      }
      long committedAt = base + 30_000; // when the live batch committed: the back-fill runs later, received_at keeps this
      byte[] body = Spill.encode(new Spill.Batch(0, 1, rows, committedAt));
      ch.confirmSelect();
      AMQP.BasicProperties persistent = new AMQP.BasicProperties.Builder().deliveryMode(2).build();
      ch.basicPublish("", t.backfillQueue(), persistent, body);
      ch.basicPublish("", t.backfillQueue(), persistent, "{\"not\":\"a spill\"}".getBytes(StandardCharsets.UTF_8));
      ch.basicPublish("", t.backfillQueue(), persistent, body);
      ch.waitForConfirmsOrDie(10_000);

      Metrics m = worker.metrics();
      awaitTrue(Duration.ofSeconds(30), "both copies back-filled and the bad body dead-lettered",
          () -> m.count("worker_backfilled_total") == 2 * rows.size() && env.deadLetterCount() == 1 && backfillDepth(env, t) == 0);
      assertEquals(4, env.queryLong("SELECT count(*) FROM $S.device_status_history"), "history: the kept rows, once");
      assertEquals(4, env.queryLong("SELECT count(DISTINCT (device_id, cycle_id, seq)) FROM $S.device_status_history"));
      assertEquals(5, env.queryLong("SELECT coalesce(sum(sample_count), 0) FROM $S.device_status_rollup_1m"), "rollups: every row, once");
      assertEquals(4, env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE writer_epoch = 1 AND slot_id = 0"),
          "history keeps the slot and epoch the rows were consumed under");
      assertEquals(4, env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE abs(extract(epoch FROM received_at) * 1000 - " + committedAt + ") < 1"),
          "history keeps the time the rows' batch committed as received_at, not the time of the back-fill");
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_current"), "the back-fill never writes current status");
    }
  }

  private static long backfillDepth(TestEnv env, Topology t) throws Exception {
    try (Channel c = env.channel()) {
      return c.queueDeclarePassive(t.backfillQueue()).getMessageCount();
    }
  }
}
