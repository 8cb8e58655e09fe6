package dev.inspection.it;

import static dev.inspection.it.ProbeOutboxIT.with;
import static dev.inspection.it.TestEnv.awaitTrue;
import static dev.inspection.it.TestEnv.http;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.inspection.node.Node;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Redis goes away in the middle of a run (issue 12 item 6) — a private redis-server on a spare port, never
 * the shared one: the platform keeps committing, a drain completes through the database poll alone, and
 * once Redis is back the probes' reports and the lease notifications flow again; the ledger loses nothing.
 */
class RedisOutageIT {

  private static Process redis(int port) throws Exception {
    Process p = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    awaitTrue(Duration.ofSeconds(10), "redis-server answers on " + port, () -> TestEnv.redisCli(port, "PING").contains("PONG"));
    return p;
  }

  private static boolean onPath(String exe) {
    for (String dir : System.getenv("PATH").split(File.pathSeparator)) if (new File(dir, exe).canExecute()) return true;
    return false;
  }

  @Test
  void redisKilledMidRunLosesNothingAndLeasesAndNotificationsRecover() throws Exception {
    assumeTrue(onPath("redis-server") && onPath("redis-cli"), "needs redis-server and redis-cli");
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Process redis = redis(port);
    Process subscriber = null;
    try (TestEnv env = new TestEnv(8)) {
      Map<String, String> r = Map.of("redis.url", "redis://127.0.0.1:" + port);
      Node sched = env.start(with(r, "role", "scheduler", "node.id", env.name + "-sched"));
      String w1 = env.name + "-w1";
      String w2 = env.name + "-w2";
      String w3 = env.name + "-w3";
      Node n1 = env.start(with(r, "role", "worker", "node.id", w1));
      Node n2 = env.start(with(r, "role", "worker", "node.id", w2));
      String probeId = env.name + "-probe";
      Node probe = env.start(with(r, "role", "probe", "node.id", probeId, "probe.sim.devices", "200", "probe.interval.ms", "300"));
      env.awaitSettled(Set.of(w1, w2), Duration.ofSeconds(30));
      int api = sched.httpPort();
      awaitTrue(Duration.ofSeconds(20), "the probe's report is in Redis", () -> http(api, "GET", "/api/v1/probes").getValue().contains(probeId));

      redis.destroyForcibly();
      redis.waitFor();
      long outageStart = System.nanoTime();
      awaitTrue(Duration.ofSeconds(20), "the API says Redis is unreachable", () -> http(api, "GET", "/api/v1/probes").getKey() == 503);
      double committedBefore = n1.metrics().count("worker_committed_total") + n2.metrics().count("worker_committed_total");
      // a drain while Redis is down: every step goes through the database poll
      assertEquals(202, http(api, "POST", "/api/v1/workers/" + w1 + "/drain").getKey());
      awaitTrue(Duration.ofSeconds(60), "w1 OFFLINE without Redis", () -> "OFFLINE".equals(env.workerState(w1)));
      env.awaitSettled(Set.of(w2), Duration.ofSeconds(30));
      awaitTrue(Duration.ofSeconds(20), "results keep being committed without Redis",
          () -> n2.metrics().count("worker_committed_total") + n1.metrics().count("worker_committed_total") > committedBefore + 500);
      System.out.printf("Redis down: drain of %s completed and results committed after %.1f s without Redis%n", w1, (System.nanoTime() - outageStart) / 1e9);

      redis = redis(port);
      long back = System.nanoTime();
      // lease notifications are published again: watch the channel while a new worker joins and slots move to it
      subscriber = new ProcessBuilder("redis-cli", "-p", Integer.toString(port), "subscribe", env.name + ":lease").redirectErrorStream(true).start();
      AtomicInteger messages = new AtomicInteger();
      Process sub = subscriber;
      Thread reader = new Thread(() -> {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(sub.getInputStream(), StandardCharsets.UTF_8))) {
          String line;
          while ((line = in.readLine()) != null) if (line.equals("message")) messages.incrementAndGet();
        } catch (Exception ignored) {
          // the subscriber is killed at the end
        }
      });
      reader.setDaemon(true);
      reader.start();
      awaitTrue(Duration.ofSeconds(30), "the probe reports through Redis again", () -> http(api, "GET", "/api/v1/probes").getKey() == 200
          && http(api, "GET", "/api/v1/probes").getValue().contains(probeId));
      Node n3 = env.start(with(r, "role", "worker", "node.id", w3));
      awaitTrue(Duration.ofSeconds(60), "lease changes are announced on Redis again", () -> messages.get() > 0);
      awaitTrue(Duration.ofSeconds(60), "the joining worker gets slots", () -> env.activeOwners().containsValue(w3));
      env.awaitSettled(Set.of(w2, w3), Duration.ofSeconds(60));
      System.out.printf("Redis back: reports and %d lease notification(s) within %.1f s%n", messages.get(), (System.nanoTime() - back) / 1e9);
      Ledger.Report report = env.drainAndBalance(probe, probeId, Map.of());
      System.out.println("Redis outage ledger: " + report);
      env.stop(n3);
    } finally {
      if (subscriber != null) subscriber.destroyForcibly();
      redis.destroyForcibly();
    }
  }
}
