package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.BrokerConnections;
import dev.inspection.node.Node;
import io.vertx.core.json.JsonArray;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Issue 14 item 4, "takeover means consuming": a worker hung with SIGSTOP keeps its AMQP connection open,
 * and with single-active-consumer its consumers stay the active ones until the broker drops the connection
 * on heartbeat. The leader closes the connection through the management API when it declares the worker
 * DEAD, so the survivor's waiting consumers become active at once. Measured from the DEAD row to the first
 * history row of each of the zombie's slots written under a newer epoch (a commit by the new owner).
 */
class ZombieTakeoverIT {
  /** Long enough that a survivor on a loaded 2-core CI machine is not declared dead too (6 s was not). */
  private static final long DEAD_MS = 10_000;

  private static Map<String, String> with(Map<String, String> base, String... kv) {
    Map<String, String> m = new HashMap<>(base);
    for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
    return m;
  }

  @Test
  void aHungWorkersSlotsCommitOnTheSurvivorWithinTheDeadTimeoutPlusTwoSecondsAndItWritesNothingAfterResuming() throws Exception {
    try (TestEnv env = new TestEnv(8)) {
      // the zombie's slots stay where they are until it is DEAD: after the rebalance that fills the second worker, neither a slot
      // nor a source worker is moved again, and only a large imbalance (a worker joining empty) is rebalanced
      Map<String, String> fast = Map.of("worker.suspect.after.ms", "5000", "worker.dead.after.ms", Long.toString(DEAD_MS),
          "pg.idle.tx.timeout.ms", "5000", "scheduler.cooldown.slot.ms", "600000", "scheduler.cooldown.source.ms", "600000",
          "scheduler.rebalance.threshold", "1.5",
          // no DB-degraded mode: its back-fill writes spilled rows into history later under the epoch they were consumed under
          // (by design, without a lease check), which would blur "nothing written under the zombie's old epochs"
          "worker.degraded.enabled", "false");
      // -Dzombie.fence=off measures the behaviour without the broker fence (the timing is then printed, not asserted)
      boolean fenceOn = !"off".equals(System.getProperty("zombie.fence"));
      env.start(with(fast, "role", "scheduler", "node.id", env.name + "-sched", "rabbit.management.url", fenceOn ? "http://127.0.0.1:15672" : "off"));
      String zombie = env.name + "-zombie";
      String w2 = env.name + "-w2";
      try (ChildNode z = ChildNode.start(env, "zombie", with(fast, "role", "worker", "node.id", zombie));
           ChildNode c2 = ChildNode.start(env, "w2", with(fast, "role", "worker", "node.id", w2))) {
        String probeId = env.name + "-probe";
        Node probe = env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "100", "probe.interval.ms", "1000"));
        awaitTrue(Duration.ofSeconds(60), "both hold slots", () -> env.activeOwners().containsValue(zombie) && env.activeOwners().containsValue(w2));
        env.awaitSettled(Set.of(zombie, w2), Duration.ofSeconds(60));
        // scale-out waves to the joining w2 (issue 14) may still be under way after the first settle: wait until every slot the
        // zombie has a lease on is ACTIVE there (none moving) before it is paused
        awaitTrue(Duration.ofSeconds(60), "the zombie's slots are all ACTIVE (none moving) when it is paused", () -> env.epochsOf(zombie).keySet()
            .equals(env.activeOwners().entrySet().stream().filter(e -> e.getValue().equals(zombie)).map(Map.Entry::getKey)
                .collect(java.util.stream.Collectors.toSet())));
        env.awaitSettled(Set.of(zombie, w2), Duration.ofSeconds(60));
        Map<Integer, Long> before = env.epochsOf(zombie);
        // the management API lists a connection once the broker has emitted its statistics (every 5 s), and answers slowly on a loaded machine
        awaitTrue(Duration.ofSeconds(60), "the zombie's one AMQP connection is found by its client properties",
            () -> brokerConnections(env, zombie).size() == 1);

        String pausedAt = env.dbNow();
        z.pause();
        awaitTrue(Duration.ofSeconds(40), "the paused worker declared DEAD", () -> "DEAD".equals(env.workerState(zombie)));
        awaitTrue(Duration.ofSeconds(fenceOn ? 30 : 120), "a commit under a new epoch on every slot the zombie held", () -> firstCommits(env, before, zombie).size() == before.size());
        env.awaitSettled(Set.of(w2), Duration.ofSeconds(30));

        Map<Integer, Long> fromDead = firstCommits(env, before, zombie);
        Map<Integer, Long> fromPause = firstCommitsSince(env, before, pausedAt);
        long worstDead = fromDead.values().stream().mapToLong(Long::longValue).max().orElseThrow();
        long worstPause = fromPause.values().stream().mapToLong(Long::longValue).max().orElseThrow();
        System.out.printf("hung worker (SIGSTOP, worker.dead.after.ms %d, broker fence " + (fenceOn ? "on" : "OFF") + "): %d slot(s); DEAD -> first commit on the survivor per slot %s ms,"
            + " worst %d ms (goal <= dead timeout + 2 s = %d ms); SIGSTOP (taken just before spawning kill) -> first commit worst %d ms%n", DEAD_MS, before.size(), fromDead,
            worstDead, DEAD_MS + 2000, worstPause);
        // without the fence the survivor's consumers wait until the broker drops the paused connection on heartbeat (requested 10 s:
        // about 20 s after the pause, 10 s after DEAD): with the takeover's own seconds that is past this bound
        // the goal (dead timeout + 2 s, issue 14) is a printed figure: tests do not fail on time; the await above is the liveness bound


        String resumedAt = env.dbNow();
        z.resume();
        awaitTrue(Duration.ofSeconds(30), "it noticed", () -> Files.readString(z.log).contains("reads its state DEAD")
            || Files.readString(z.log).contains("reads its own state DEAD"));
        awaitTrue(Duration.ofSeconds(30), "quarantined then warming again", () -> env.query("SELECT 1 FROM $S.worker_state_history WHERE worker_id = '"
            + zombie + "' AND old_state = 'QUARANTINE' AND new_state = 'WARMING'").size() == 1);
        env.drainAndBalance(probe, probeId, Map.of());
        long stale = 0;
        for (Map.Entry<Integer, Long> e : before.entrySet()) {
          stale += env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE slot_id = " + e.getKey() + " AND writer_epoch <= " + e.getValue()
              + " AND received_at > '" + resumedAt + "'");
        }
        assertEquals(0, stale, "nothing written under the zombie's old epochs after it resumed");
        // (not from pausedAt: spawning `kill -STOP` may take a second on a loaded machine, and the zombie commits until it stops)
        assertEquals(0, env.writesByDeposed(before, deadAt(env, zombie)), "nothing written under the zombie's old epochs after it was declared DEAD");
      }
    }
  }

  private static String deadAt(TestEnv env, String worker) throws Exception {
    return (String) env.query("SELECT min(at)::text FROM $S.worker_state_history WHERE new_state = 'DEAD' AND worker_id = '" + worker + "'").get(0)[0];
  }

  /** Slot → ms from the zombie's DEAD row to the slot's first history row under a newer epoch. */
  private static Map<Integer, Long> firstCommits(TestEnv env, Map<Integer, Long> before, String worker) throws Exception {
    String dead = deadAt(env, worker);
    return dead == null ? Map.of() : firstCommitsSince(env, before, dead);
  }

  private static Map<Integer, Long> firstCommitsSince(TestEnv env, Map<Integer, Long> before, String since) throws Exception {
    Map<Integer, Long> out = new TreeMap<>();
    for (Map.Entry<Integer, Long> e : before.entrySet()) {
      List<Object[]> r = env.query("SELECT (extract(epoch from min(received_at) - '" + since + "'::timestamptz) * 1000)::bigint"
          + " FROM $S.device_status_history WHERE slot_id = " + e.getKey() + " AND writer_epoch > " + e.getValue());
      if (r.get(0)[0] != null) out.put(e.getKey(), ((Number) r.get(0)[0]).longValue());
    }
    return out;
  }

  /** Names of the worker's connections that RabbitMQ's management API lists (the local broker, guest). */
  static List<String> brokerConnections(TestEnv env, String workerId) throws Exception {
    String auth = Base64.getEncoder().encodeToString("guest:guest".getBytes(StandardCharsets.UTF_8));
    HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:15672/api/connections?columns=name,vhost,client_properties"))
        .header("Authorization", "Basic " + auth).timeout(Duration.ofSeconds(15)).build();
    HttpResponse<String> r = HttpClient.newHttpClient().send(req, HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) throw new IllegalStateException("management API answered " + r.statusCode() + " (scripts/ensure-services.sh enables it)");
    return BrokerConnections.ofWorker(new JsonArray(r.body()), workerId, env.name, "/");
  }
}
