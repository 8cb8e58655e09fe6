package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.node.Node;
import java.nio.file.Files;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Faults that need real processes: kill -9 of a worker (scenario D), a worker paused with SIGSTOP past
 * the dead timeout, and the leader's death and pause (split brain).
 */
class FailoverIT {

  private static Map<String, String> with(Map<String, String> base, String... kv) {
    Map<String, String> m = new HashMap<>(base);
    for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
    return m;
  }

  /** The defaults of every threshold that decides how fast a crash is handled (conf/node.properties). */
  private static final Map<String, String> DEFAULT_TIMING = Map.of("worker.heartbeat.ms", "3000", "worker.lease.poll.ms", "1000",
      "scheduler.tick.ms", "500", "scheduler.election.ms", "1000");

  @Test
  void killNineOfAWorkerMovesItsSlotsToTheSurvivorWithinSeconds() throws Exception {
    try (TestEnv env = new TestEnv(32)) {
      Node sched = env.start(with(DEFAULT_TIMING, "role", "scheduler", "node.id", env.name + "-sched"));
      String w1 = env.name + "-w1";
      String w2 = env.name + "-w2";
      try (ChildNode c1 = ChildNode.start(env, "w1", with(DEFAULT_TIMING, "role", "worker", "node.id", w1));
           ChildNode c2 = ChildNode.start(env, "w2", with(DEFAULT_TIMING, "role", "worker", "node.id", w2))) {
        String probeId = env.name + "-probe";
        Node probe = env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "400", "probe.interval.ms", "300"));
        awaitTrue(Duration.ofSeconds(60), "both hold slots", () -> env.activeOwners().containsValue(w1) && env.activeOwners().containsValue(w2));
        env.awaitSettled(Set.of(w1, w2), Duration.ofSeconds(60));
        int orphans = env.epochsOf(w1).size();

        long t0 = System.nanoTime();
        c1.kill9();
        awaitTrue(Duration.ofSeconds(40), "w1 declared DEAD", () -> "DEAD".equals(env.workerState(w1)));
        long detected = System.nanoTime();
        env.awaitSettled(Set.of(w2), Duration.ofSeconds(40));
        long consuming = System.nanoTime();
        System.out.printf("kill -9 of a worker holding %d of %d slots: detected DEAD after %d ms, every orphaned slot consuming on the survivor"
            + " %d ms later (total %d ms; goal 3000 ms)%n", orphans, env.slots, (detected - t0) / 1_000_000, (consuming - detected) / 1_000_000,
            (consuming - t0) / 1_000_000);
        String reason = (String) env.query("SELECT reason FROM $S.worker_state_history WHERE worker_id = '" + w1
            + "' AND new_state = 'DEAD' ORDER BY id DESC LIMIT 1").get(0)[0];
        assertTrue(reason.contains("liveness lock"), "found through the liveness lock, not the heartbeat timeout: " + reason);
        // the leader waited on w1's lock in PostgreSQL and heard of the crash at once, not at its next round
        assertTrue(sched.metrics().registry().find("scheduler_liveness_watch_freed_total").counters().stream().mapToDouble(c -> c.count()).sum() >= 1,
            "the leader's liveness watch found w1's lock free");
        env.drainAndBalance(probe, probeId, Map.of());
      }
    }
  }

  @Test
  void workerPausedPastTheDeadTimeoutLosesItsSlotsAndCommitsNothingAfterResuming() throws Exception {
    try (TestEnv env = new TestEnv(8)) {
      Map<String, String> fast = Map.of("worker.suspect.after.ms", "1500", "worker.dead.after.ms", "3000", "pg.idle.tx.timeout.ms", "2000");
      env.start(with(fast, "role", "scheduler", "node.id", env.name + "-sched"));
      String w1 = env.name + "-paused";
      String w2 = env.name + "-w2";
      try (ChildNode c1 = ChildNode.start(env, "paused", with(fast, "role", "worker", "node.id", w1));
           ChildNode c2 = ChildNode.start(env, "w2", with(fast, "role", "worker", "node.id", w2))) {
        String probeId = env.name + "-probe";
        Node probe = env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "300", "probe.interval.ms", "200"));
        awaitTrue(Duration.ofSeconds(60), "both hold slots", () -> env.activeOwners().containsValue(w1) && env.activeOwners().containsValue(w2));
        env.awaitSettled(Set.of(w1, w2), Duration.ofSeconds(60));
        Map<Integer, Long> before = env.epochsOf(w1);

        c1.pause();
        awaitTrue(Duration.ofSeconds(30), "the paused worker declared DEAD", () -> "DEAD".equals(env.workerState(w1)));
        awaitTrue(Duration.ofSeconds(30), "its slots ACTIVE on the survivor",
            () -> env.activeOwners().values().stream().filter(w2::equals).count() == env.slots);
        String moved = env.dbNow();
        c1.resume();
        // it reads DEAD, stops, is quarantined, and comes back as a worker without its old leases
        awaitTrue(Duration.ofSeconds(30), "it noticed", () -> Files.readString(c1.log).contains("reads its state DEAD")
            || Files.readString(c1.log).contains("reads its own state DEAD"));
        awaitTrue(Duration.ofSeconds(30), "quarantined then warming again", () -> env.query("SELECT 1 FROM $S.worker_state_history WHERE worker_id = '"
            + w1 + "' AND old_state = 'QUARANTINE' AND new_state = 'WARMING'").size() == 1);
        String log = Files.readString(c1.log);
        System.out.printf("SIGSTOP past the dead timeout: on SIGCONT the paused worker's in-flight batches were %s%n",
            log.contains("rolled back") ? "rejected by the lease check (fenced)"
                : log.contains("idle-in-transaction timeout") ? "rejected: PostgreSQL had ended their open transactions (idle-in-transaction timeout)"
                : "dropped when it read its own state DEAD");
        env.drainAndBalance(probe, probeId, Map.of());
        assertEquals(0, env.writesByDeposed(before, moved), "nothing committed under the paused worker's old epochs after its slots moved");
      }
    }
  }

  @Test
  void leaderDeathAndPauseHandLeadershipOnAndTheOldLeaderWritesNothing() throws Exception {
    try (TestEnv env = new TestEnv(8).withoutScheduler()) {
      Map<String, String> sched = Map.of("role", "scheduler", "scheduler.leader.session.timeout.ms", "2000", "scheduler.election.ms", "500");
      try (ChildNode s1 = ChildNode.start(env, "s1", with(sched, "node.id", env.name + "-s1"))) {
        awaitTrue(Duration.ofSeconds(20), "s1 leads", () -> leader(env).equals(env.name + "-s1"));
        try (ChildNode s2 = ChildNode.start(env, "s2", with(sched, "node.id", env.name + "-s2"))) {
          String w1 = env.name + "-w1";
          env.start(Map.of("role", "worker", "node.id", w1));
          String probeId = env.name + "-probe";
          Node probe = env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "200", "probe.interval.ms", "300"));
          env.awaitSettled(Set.of(w1), Duration.ofSeconds(30));

          long t0 = System.nanoTime();
          s1.kill9();
          awaitTrue(Duration.ofSeconds(20), "s2 leads", () -> leader(env).equals(env.name + "-s2"));
          System.out.printf("kill -9 of the leader: a follower leads after %d ms%n", (System.nanoTime() - t0) / 1_000_000);

          try (ChildNode s3 = ChildNode.start(env, "s3", with(sched, "node.id", env.name + "-s3"))) {
            long oldTerm = term(env);
            long p0 = System.nanoTime();
            s2.pause(); // split brain: s2 still believes it leads
            awaitTrue(Duration.ofSeconds(30), "s3 leads", () -> leader(env).equals(env.name + "-s3"));
            System.out.printf("SIGSTOP of the leader: a follower leads after %d ms (the paused session ends after its idle timeout)%n",
                (System.nanoTime() - p0) / 1_000_000);
            // work for the new leader while the old one sleeps: a worker joins and takes slots
            String w2 = env.name + "-w2";
            env.start(Map.of("role", "worker", "node.id", w2));
            awaitTrue(Duration.ofSeconds(30), "w2 got slots from the new leader", () -> env.activeOwners().containsValue(w2));
            String elected = env.dbNow();
            s2.resume();
            awaitTrue(Duration.ofSeconds(20), "the old leader steps down", () -> Files.readString(s2.log).contains("steps down"));
            env.awaitSettled(Set.of(w1, w2), Duration.ofSeconds(30));
            assertEquals(0, env.queryLong("SELECT count(*) FROM $S.slot_lease_history WHERE term = " + oldTerm + " AND at > '" + elected + "'"),
                "no lease change by the deposed leader");
            assertEquals(0, env.queryLong("SELECT count(*) FROM $S.worker_state_history WHERE term = " + oldTerm + " AND at > '" + elected + "'"),
                "no worker state change by the deposed leader");
            assertTrue(term(env) > oldTerm);
            env.drainAndBalance(probe, probeId, Map.of());
          }
        }
      }
    }
  }

  private static String leader(TestEnv env) throws Exception {
    Object id = env.query("SELECT leader_id FROM $S.scheduler_term").get(0)[0];
    return id == null ? "" : (String) id;
  }

  private static long term(TestEnv env) throws Exception {
    return env.queryLong("SELECT term FROM $S.scheduler_term");
  }
}
