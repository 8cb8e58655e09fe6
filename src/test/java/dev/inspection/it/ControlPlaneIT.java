package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static dev.inspection.it.TestEnv.http;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.node.Node;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Seed 000 §4.4 scenarios A, B, C and E with the workers in this JVM (the process-level faults — kill -9,
 * SIGSTOP, a leader's death — are in {@link FailoverIT}). Each ends with every slot ACTIVE on exactly one
 * owner and a ledger with nothing lost, duplicated or stale.
 */
class ControlPlaneIT {

  private static Map<String, String> with(Map<String, String> base, String... kv) {
    Map<String, String> m = new HashMap<>(base);
    for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
    return m;
  }

  /**
   * A graceful move never goes through the fence: the old owner commits and acks what it holds and only
   * then hands the slot over, so no batch of any worker is ever rejected. Redeliveries are printed as a
   * figure (goal 0; the drills measure them on 128-slot drains): when a slot moves again right after it
   * was opened, the broker can flag a few messages redelivered that it had routed to the cancelled
   * consumer but never delivered to it (diagnostics on every client-side path showed none reached the old
   * owner) — nothing is processed twice, and the ledger checks that nothing is lost or counted twice.
   */
  private static void assertGraceful(String what, Node... workers) {
    double fenced = 0;
    for (Node w : workers) {
      fenced += w.metrics().registry().find("worker_fenced_total").counters().stream().mapToDouble(c -> c.count()).sum();
    }
    System.out.printf("%s: %.0f redelivered message(s) (goal 0), %.0f fenced%n", what, TestEnv.redelivered(workers), fenced);
    assertEquals(0.0, fenced, what + ": a graceful move must never need the fence");
  }

  @Test
  void coldStartOpensProgressivelyAndJoiningWorkersTakeTheirShareWithoutRedelivery() throws Exception {
    try (TestEnv env = new TestEnv(16)) {
      Node sched = env.start(Map.of("role", "scheduler", "node.id", env.name + "-sched", "scheduler.min.workers", "3"));
      String url = "http://127.0.0.1:" + sched.httpPort();
      String probeId = env.name + "-probe";
      Node probe = env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "300", "probe.interval.ms", "400",
          "probe.inventory.url", url, "probe.pacing.refresh.ms", "200"));
      // scenario A: no worker yet → non-critical devices at a quarter of their rate
      awaitTrue(Duration.ofSeconds(10), "pace 25% with no worker", () -> probe.probe().pace() == 0.25);

      String w1 = env.name + "-w1";
      Node n1 = env.start(Map.of("role", "worker", "node.id", w1));
      env.awaitSettled(Set.of(w1), Duration.ofSeconds(20));
      assertEquals(16, env.activeOwners().values().stream().filter(w1::equals).count(), "the only worker holds every slot");
      awaitTrue(Duration.ofSeconds(10), "pace 50% with one worker", () -> probe.probe().pace() == 0.5);

      // scenario B: a joining worker warms up, becomes ACTIVE and a rebalance moves slots to it
      String w2 = env.name + "-w2";
      Node n2 = env.start(Map.of("role", "worker", "node.id", w2));
      awaitTrue(Duration.ofSeconds(30), "w2 holds a share", () -> env.activeOwners().values().stream().filter(w2::equals).count() >= 5);
      env.awaitSettled(Set.of(w1, w2), Duration.ofSeconds(30));
      awaitTrue(Duration.ofSeconds(10), "pace 75% with two workers", () -> probe.probe().pace() == 0.75);

      String w3 = env.name + "-w3";
      Node n3 = env.start(Map.of("role", "worker", "node.id", w3));
      awaitTrue(Duration.ofSeconds(30), "w3 holds a share", () -> env.activeOwners().values().stream().filter(w3::equals).count() >= 3);
      env.awaitSettled(Set.of(w1, w2, w3), Duration.ofSeconds(30));
      awaitTrue(Duration.ofSeconds(10), "full speed with three workers", () -> probe.probe().pace() == 1.0);

      List<Object[]> history = env.query("SELECT count(*) FROM $S.slot_lease_history WHERE reason IN ('rebalance', 'scale-out')");
      assertTrue(((Number) history.get(0)[0]).longValue() >= 8, "slots moved by scale-out waves and rebalances, recorded in the lease history");
      assertGraceful("joins and rebalances", n1, n2, n3);
      env.drainAndBalance(probe, probeId, Map.of());
    }
  }

  @Test
  void drainThroughTheApiMovesEverySlotOutAndTheWorkerLeavesOffline() throws Exception {
    try (TestEnv env = new TestEnv(16)) {
      String w1 = env.name + "-w1";
      String w2 = env.name + "-w2";
      Node n1 = env.start(Map.of("role", "worker", "node.id", w1));
      Node n2 = env.start(Map.of("role", "worker", "node.id", w2));
      String probeId = env.name + "-probe";
      Node probe = env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "300", "probe.interval.ms", "300"));
      env.awaitSettled(Set.of(w1, w2), Duration.ofSeconds(30));
      awaitTrue(Duration.ofSeconds(30), "both hold slots", () -> env.activeOwners().containsValue(w1) && env.activeOwners().containsValue(w2));
      int port = env.scheduler().httpPort();

      // refusals first: unknown worker, and a follower that is not the leader
      assertEquals(404, http(port, "POST", "/api/v1/workers/nobody/drain").getKey());
      Node follower = env.start(Map.of("role", "scheduler", "node.id", env.name + "-follower"));
      Map.Entry<Integer, String> refused = http(follower.httpPort(), "POST", "/api/v1/workers/" + w1 + "/drain");
      assertEquals(409, refused.getKey(), refused.getValue());
      assertEquals("http://127.0.0.1:" + port, new JsonObject(refused.getValue()).getString("leader_url"), "the refusal points at the leader");

      int before = (int) env.activeOwners().values().stream().filter(w1::equals).count();
      long start = System.nanoTime();
      Map.Entry<Integer, String> accepted = http(port, "POST", "/api/v1/workers/" + w1 + "/drain");
      assertEquals(202, accepted.getKey(), accepted.getValue());
      awaitTrue(Duration.ofSeconds(30), "w1 drained and OFFLINE", () -> "OFFLINE".equals(env.workerState(w1)));
      long ms = (System.nanoTime() - start) / 1_000_000;
      env.awaitSettled(Set.of(w2), Duration.ofSeconds(30));
      System.out.printf("drain of %d slot(s) through the API: %d ms until OFFLINE%n", before, ms);

      JsonObject detail = new JsonObject(http(port, "GET", "/api/v1/workers/" + w1).getValue());
      assertEquals(100, detail.getJsonObject("drain", new JsonObject()).getInteger("percent"), detail.encode());
      assertEquals(0, detail.getJsonArray("slots").size());
      awaitTrue(Duration.ofSeconds(10), "the drained worker was told to leave", n1::exitRequested);
      assertEquals(409, http(port, "POST", "/api/v1/workers/" + w1 + "/drain").getKey(), "an OFFLINE worker cannot be drained again");
      assertGraceful("a drain", n1, n2);
      env.drainAndBalance(probe, probeId, Map.of());
    }
  }

  @Test
  void zombieWorkerWithFrozenHeartbeatLosesItsSlotsAndNoneOfItsBatchesCommit() throws Exception {
    try (TestEnv env = new TestEnv(8)) {
      // the broker fence (ZombieTakeoverIT) is off here: this test is about the database's lease check (D1) stopping a
      // zombie whose deliveries keep coming; with the fence its connection is closed and it never gets to try a commit
      Map<String, String> fast = Map.of("worker.suspect.after.ms", "1500", "worker.dead.after.ms", "3000", "rabbit.management.url", "off");
      env.start(with(fast, "role", "scheduler", "node.id", env.name + "-sched"));
      String w1 = env.name + "-zombie";
      String w2 = env.name + "-w2";
      Node zombie = env.start(Map.of("role", "worker", "node.id", w1));
      env.start(Map.of("role", "worker", "node.id", w2));
      String probeId = env.name + "-probe";
      Node probe = env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "200", "probe.interval.ms", "200"));
      awaitTrue(Duration.ofSeconds(30), "both hold slots", () -> env.activeOwners().containsValue(w1) && env.activeOwners().containsValue(w2));
      env.awaitSettled(Set.of(w1, w2), Duration.ofSeconds(30));
      Map<Integer, Long> zombieEpochs = env.epochsOf(w1);

      zombie.worker().leases().freezeHeartbeat(); // scenario E: the heartbeat thread hangs, consumption goes on
      awaitTrue(Duration.ofSeconds(20), "the zombie is declared DEAD", () -> "DEAD".equals(env.workerState(w1)));
      env.awaitSettled(Set.of(w2), Duration.ofSeconds(30));
      String moved = env.dbNow();
      awaitTrue(Duration.ofSeconds(20), "the zombie stopped consuming", () -> zombie.worker().heldSlots().isEmpty());
      double fenced = zombieEpochs.keySet().stream().mapToDouble(s -> zombie.metrics().count("worker_fenced_total", "slot", Integer.toString(s))).sum();
      assertTrue(fenced > 0, "its batches were rejected by the lease check (D1), not just dropped");
      env.drainAndBalance(probe, probeId, Map.of());
      assertEquals(0, env.writesByDeposed(zombieEpochs, moved), "no commit by the deposed owner after its slots moved");
    }
  }

  @Test
  void aLeaseNobodyRenewsIsTakenOverWithAnEpochBumpEvenBeforeItsOwnerIsDeclaredDead() throws Exception {
    try (TestEnv env = new TestEnv(4)) {
      // the dead timeout is out of reach: only lease expiry can move the slots
      env.start(Map.of("role", "scheduler", "node.id", env.name + "-sched", "worker.suspect.after.ms", "600000",
          "worker.dead.after.ms", "600000", "scheduler.lease.expiry.grace.ms", "500", "worker.lease.ttl.ms", "2000"));
      String w1 = env.name + "-stuck";
      String w2 = env.name + "-w2";
      Node stuck = env.start(Map.of("role", "worker", "node.id", w1, "worker.lease.ttl.ms", "2000"));
      env.awaitSettled(Set.of(w1), Duration.ofSeconds(20));
      env.start(Map.of("role", "worker", "node.id", w2, "worker.lease.ttl.ms", "2000", "worker.warmup.ms", "0"));
      awaitTrue(Duration.ofSeconds(20), "w2 ACTIVE", () -> "ACTIVE".equals(env.workerState(w2)));
      String probeId = env.name + "-probe";
      Node probe = env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "100", "probe.interval.ms", "300"));
      Map<Integer, Long> before = env.epochsOf(w1);
      stuck.worker().leases().freezeHeartbeat();
      // the stuck worker keeps its consumers until a batch of it is fenced: traffic is what makes it let go
      env.awaitSettled(Set.of(w2), Duration.ofSeconds(30));
      assertTrue(env.queryLong("SELECT count(*) FROM $S.slot_lease_history WHERE reason = 'lease expired' AND old_owner = '" + w1 + "'") > 0,
          "taken over because the lease expired");
      for (Map.Entry<Integer, Long> e : env.epochsOf(w2).entrySet()) {
        if (before.containsKey(e.getKey())) assertTrue(e.getValue() > before.get(e.getKey()), "slot " + e.getKey() + " moved with an epoch bump");
      }
      assertEquals("ACTIVE", env.workerState(w1), "its owner was never declared dead: expiry alone moved the slots");
      env.drainAndBalance(probe, probeId, Map.of());
    }
  }

  @Test
  void withoutRedisMovesStillCompleteThroughDatabasePolling() throws Exception {
    try (TestEnv env = new TestEnv(8)) {
      // nothing listens on port 1: every notification is lost; the lease poll is the only signal
      Map<String, String> noRedis = Map.of("redis.url", "redis://127.0.0.1:1");
      env.start(with(noRedis, "role", "scheduler", "node.id", env.name + "-sched"));
      String w1 = env.name + "-w1";
      String w2 = env.name + "-w2";
      Node n1 = env.start(with(noRedis, "role", "worker", "node.id", w1));
      Node n2 = env.start(with(noRedis, "role", "worker", "node.id", w2));
      String probeId = env.name + "-probe";
      Node probe = env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "200", "probe.interval.ms", "300"));
      awaitTrue(Duration.ofSeconds(30), "both hold slots", () -> env.activeOwners().containsValue(w1) && env.activeOwners().containsValue(w2));
      env.awaitSettled(Set.of(w1, w2), Duration.ofSeconds(30));
      assertEquals(202, http(env.scheduler().httpPort(), "POST", "/api/v1/workers/" + w1 + "/drain").getKey());
      awaitTrue(Duration.ofSeconds(30), "w1 OFFLINE", () -> "OFFLINE".equals(env.workerState(w1)));
      env.awaitSettled(Set.of(w2), Duration.ofSeconds(30));
      assertGraceful("a drain without Redis", n1, n2);
      env.drainAndBalance(probe, probeId, Map.of());
    }
  }
}
