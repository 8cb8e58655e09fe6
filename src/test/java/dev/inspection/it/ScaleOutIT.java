package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.node.Node;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Issue 14 items 1 and 2 on the real services with 256 slots and the default move budget, cooldowns
 * (5 moves per rebalance, slot 5 min, source 1 min), rebalance interval and wave sizes: a cold start opens
 * the slots in waves, and each joining worker (1 → 2 → 3) holds its share within 60 s of turning ACTIVE.
 * Two settings differ from the defaults, neither of them a move budget or a cooldown: the warm-up is
 * TestEnv's 0.5 s instead of 60 s (the minute is measured from ACTIVE, as in seed 000 §4.4 B), and every
 * slot weighs 1 ({@code scheduler.weight.*=0}) so that "its share ± 1 slot by the planner's weights" is a
 * slot count the test can read from the database (the planner's weighted behaviour is simulated in
 * {@code ScaleOutSimulationTest}).
 */
class ScaleOutIT {
  private static final int SLOTS = 256;

  private static Map<String, String> defaults(Map<String, String> extra) {
    Map<String, String> m = new HashMap<>(Map.of("scheduler.cooldown.slot.ms", "300000", "scheduler.cooldown.source.ms", "60000",
        "scheduler.rebalance.interval.ms", "60000", "scheduler.tick.ms", "500", "scheduler.weight.devices", "0", "scheduler.weight.rate", "0",
        "scheduler.weight.backlog", "0", "scheduler.weight.process.ms", "0", "scheduler.weight.critical", "0", "scheduler.min.workers", "0"));
    // not a move budget or cooldown: an old owner gets a minute to release before the fence, so a loaded machine
    // does not turn a slow release into a fenced batch
    m.put("scheduler.move.timeout.ms", "60000");
    m.putAll(extra);
    return m;
  }

  private static long held(TestEnv env, String worker) throws Exception {
    return env.activeOwners().values().stream().filter(worker::equals).count();
  }

  /** The waves of one kind from the lease history: one transaction per wave, so one {@code at} per wave. */
  private static List<String> waves(TestEnv env, String reason) throws Exception {
    List<String> out = new ArrayList<>();
    for (Object[] r : env.query("SELECT new_owner, count(*), min(at) FROM $S.slot_lease_history WHERE reason = '" + reason
        + "' GROUP BY new_owner, at ORDER BY min(at)")) {
      out.add(((String) r[0]).replaceAll(".*-", "") + ":" + r[1]);
    }
    return out;
  }

  /** Where a scale-out wave spends its time, averaged over its slots: MOVING → released → handed over → ACTIVE (ms). */
  private static String phases(TestEnv env) throws Exception {
    List<Object[]> r = env.query("""
        WITH m AS (SELECT slot_id, at FROM $S.slot_lease_history WHERE reason = 'scale-out'),
        x AS (SELECT m.slot_id, m.at AS moving,
          (SELECT min(at) FROM $S.slot_lease_history h WHERE h.slot_id = m.slot_id AND h.reason = 'released' AND h.at >= m.at) AS released,
          (SELECT min(at) FROM $S.slot_lease_history h WHERE h.slot_id = m.slot_id AND h.new_state = 'LOADING_NEW' AND h.at >= m.at) AS handed,
          (SELECT min(at) FROM $S.slot_lease_history h WHERE h.slot_id = m.slot_id AND h.new_state = 'ACTIVE' AND h.at >= m.at) AS active FROM m)
        SELECT round(avg(extract(epoch FROM released - moving) * 1000)), round(max(extract(epoch FROM released - moving) * 1000)),
               round(avg(extract(epoch FROM handed - released) * 1000)), round(avg(extract(epoch FROM active - handed) * 1000)) FROM x""");
    Object[] a = r.get(0);
    return "MOVING -> released avg " + a[0] + " ms (max " + a[1] + "), released -> handed over avg " + a[2] + " ms, handed over -> ACTIVE avg " + a[3] + " ms";
  }

  /** From the first cold-start wave to a worker until its last slot turned ACTIVE, from the lease history (ms). */
  private static long openingMs(TestEnv env, String worker) throws Exception {
    return env.queryLong("SELECT round(extract(epoch FROM (SELECT max(at) FROM $S.slot_lease_history WHERE new_owner = '" + worker
        + "' AND new_state = 'ACTIVE') - (SELECT min(at) FROM $S.slot_lease_history WHERE new_owner = '" + worker + "' AND reason = 'cold start')) * 1000)");
  }

  /** Messages ready in every slot queue, read on one channel (a channel per queue is slow at 768 queues). */
  private static long ready(TestEnv env) throws Exception {
    dev.inspection.messaging.Topology t = env.topology();
    long n = 0;
    try (com.rabbitmq.client.Channel ch = env.channel()) {
      for (int s = 0; s < SLOTS; s++) for (dev.inspection.messaging.Priority p : dev.inspection.messaging.Priority.values()) n += ch.queueDeclarePassive(t.queue(s, p)).getMessageCount();
    }
    return n;
  }

  /** Results the probe's outbox holds as confirmed by the broker. */
  private static long confirmed(TestEnv env, String probeId) throws Exception {
    try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + env.dataDir.resolve("outbox-" + probeId + ".db"));
         java.sql.Statement st = c.createStatement(); java.sql.ResultSet rs = st.executeQuery("SELECT count(*) FROM outbox_confirmed")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static double fenced(Node... workers) {
    double n = 0;
    for (Node w : workers) n += w.metrics().registry().find("worker_fenced_total").counters().stream().mapToDouble(c -> c.count()).sum();
    return n;
  }

  /** Starts a worker, waits until it is ACTIVE, then until it holds {@code share} ± 1 slots; the ms from ACTIVE to its share. */
  private static long joinAndTime(TestEnv env, String id, double share, List<Node> started) throws Exception {
    long t0 = System.nanoTime();
    started.add(env.start(defaults(Map.of("role", "worker", "node.id", id))));
    awaitTrue(Duration.ofSeconds(30), id + " ACTIVE", () -> "ACTIVE".equals(env.workerState(id)));
    long active = System.nanoTime();
    try {
      // the goal is 60 s (issue 14); tests do not fail on time, so the deadline is a liveness bound and the time is printed
      awaitTrue(Duration.ofSeconds(180), id + " holds its share of " + share + " ± 1 slot(s) within 180 s of turning ACTIVE",
          () -> Math.abs(held(env, id) - share) <= 1);
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(id + " holds " + held(env, id) + " slot(s) after 180 s; waves " + waves(env, "scale-out") + "; " + phases(env), e);
    }
    long ms = (System.nanoTime() - active) / 1_000_000;
    System.out.printf("%s: ACTIVE %d ms after start, at its share (%d of %d slots, share %.1f) %d ms after ACTIVE%n", id, (active - t0) / 1_000_000,
        held(env, id), SLOTS, share, ms);
    return ms;
  }

  @Test
  void joiningWorkersReachTheirShareWithinAMinuteAtTheDefaultMoveBudgetAndCooldowns() throws Exception {
    try (TestEnv env = new TestEnv(SLOTS)) {
      Node sched = env.start(defaults(Map.of("role", "scheduler", "node.id", env.name + "-sched")));
      awaitTrue(Duration.ofSeconds(30), "the scheduler leads", () -> sched.scheduler().leading());
      List<Node> workers = new ArrayList<>();
      String w1 = env.name + "-w1";
      long t0 = System.nanoTime();
      workers.add(env.start(defaults(Map.of("role", "worker", "node.id", w1))));
      env.awaitSettled(Set.of(w1), Duration.ofSeconds(240));
      System.out.printf("cold start: all %d slots ACTIVE on w1 %d ms after the first wave (%d ms after its start, as this test saw it); waves %s%n",
          SLOTS, openingMs(env, w1), (System.nanoTime() - t0) / 1_000_000, waves(env, "cold start"));
      assertTrue(waves(env, "cold start").size() > 1, "the cold start came in waves, not in one round");

      String probeId = env.name + "-probe";
      Node probe = env.start(defaults(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "300", "probe.interval.ms", "1000")));
      awaitTrue(Duration.ofSeconds(90), "results flowing", () -> env.queryLong("SELECT count(*) FROM $S.device_status_history") > 500);

      long second = joinAndTime(env, env.name + "-w2", SLOTS / 2.0, workers);
      long third = joinAndTime(env, env.name + "-w3", SLOTS / 3.0, workers);
      // a worker consumes only once it has declared the topology (768 queues): on a loaded broker that alone took over a minute
      env.awaitSettled(Set.of(w1, env.name + "-w2", env.name + "-w3"), Duration.ofSeconds(240));
      System.out.printf("time to share: w2 %d ms, w3 %d ms; scale-out waves %s; %s%n", second, third, waves(env, "scale-out"), phases(env));
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.slot_lease_history WHERE reason = 'move timeout'"), "every old owner released in time");

      Node[] ws = workers.toArray(new Node[0]);
      System.out.printf("scale-out 1 -> 2 -> 3: %.0f redelivered message(s), %.0f fenced%n", TestEnv.redelivered(ws), fenced(ws));
      assertEquals(0.0, fenced(ws), "a scale-out move never needs the fence");
      Ledger.Report r = env.drainAndBalance(probe, probeId, Map.of());
      System.out.println("ledger: " + r);
    }
  }

  @Test
  void aColdStartUnderABacklogOpensInWavesWhileCommitsStayUnderASecond() throws Exception {
    try (TestEnv env = new TestEnv(SLOTS)) {
      // a scheduler and a probe, no worker: the backlog builds up in the slot queues (default publishing: v3 messages of several results)
      Node sched = env.start(defaults(Map.of("role", "scheduler", "node.id", env.name + "-sched")));
      awaitTrue(Duration.ofSeconds(30), "the scheduler leads", () -> sched.scheduler().leading());
      String probeId = env.name + "-probe";
      Map<String, String> probeFlags = Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "2500", "probe.interval.ms", "500");
      Node probe = env.start(defaults(probeFlags));
      long target = 50_000;
      awaitTrue(Duration.ofSeconds(150), "a backlog of " + target + " results in the broker", () -> confirmed(env, probeId) >= target);
      env.stop(probe);
      long backlog = confirmed(env, probeId);
      long messages = ready(env);

      String w1 = env.name + "-w1";
      long t0 = System.nanoTime();
      Node worker = env.start(defaults(Map.of("role", "worker", "node.id", w1)));
      // the worker's commit p99 (its recent window), sampled until its last slot is ACTIVE
      AtomicLong worstP99 = new AtomicLong(-1);
      AtomicLong samples = new AtomicLong();
      awaitTrue(Duration.ofSeconds(180), "every slot ACTIVE on w1", () -> {
        worstP99.accumulateAndGet(Math.round(worker.metrics().commitLatency().p99Ms()), Math::max);
        samples.incrementAndGet();
        return env.activeOwners().size() == SLOTS;
      });
      long opened = openingMs(env, w1);
      awaitTrue(Duration.ofSeconds(180), "the backlog consumed", () -> ready(env) == 0);
      long drained = (System.nanoTime() - t0) / 1_000_000;
      List<String> waves = waves(env, "cold start");
      System.out.printf("cold start under a backlog of %d results (%d messages): %d slots ACTIVE %d ms after the first wave, in %d waves %s; backlog consumed"
          + " %d ms after the worker's start; worst commit p99 while opening %d ms (%d samples)%n", backlog, messages, SLOTS, opened, waves.size(), waves, drained,
          worstP99.get(), samples.get());
      assertTrue(waves.size() > 1, "slots opened in waves");
      // the commit p99 while opening (goal < 1 s) is a figure, printed above: tests do not fail on time
      assertEquals(0.0, fenced(worker));
      Ledger.Report r = env.drainAndBalance(env.start(defaults(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "0"))), probeId,
          Map.of());
      System.out.println("ledger: " + r);
    }
  }
}
