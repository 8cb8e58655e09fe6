package dev.inspection.it;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.node.Node;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Issue 14 (the double election): a scheduler campaigns only after its first Redis and database round trips, and
 * waits for them at most one lock-session timeout. A Redis that accepts connections and never answers (a hung
 * server, a half-open proxy) must not keep the only scheduler from leading.
 */
class LeaderWarmUpIT {
  private static final long SESSION_TIMEOUT_MS = 3000;

  @Test
  void aRedisThatNeverAnswersDelaysTheCampaignByOneSessionTimeoutAtMost() throws Exception {
    List<Socket> held = new CopyOnWriteArrayList<>();
    try (ServerSocket silent = new ServerSocket(0); TestEnv env = new TestEnv(4)) {
      Thread acceptor = new Thread(() -> {
        try {
          while (true) held.add(silent.accept()); // accepted, never read from, never written to
        } catch (Exception closed) {
          // the test is over
        }
      }, "silent-redis");
      acceptor.setDaemon(true);
      acceptor.start();
      long before = env.queryLong("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint");
      // TestEnv.start waits (30 s) until the scheduler leads: without the bound it would wait for Redis forever
      Node s = env.start(Map.of("role", "scheduler", "node.id", env.name + "-s1", "redis.url", "redis://127.0.0.1:" + silent.getLocalPort(),
          "scheduler.leader.session.timeout.ms", Long.toString(SESSION_TIMEOUT_MS)));
      assertTrue(s.scheduler().leading());
      long elected = env.queryLong("SELECT (extract(epoch FROM elected_at) * 1000)::bigint FROM $S.scheduler_term WHERE id = 1");
      assertFalse(held.isEmpty(), "the scheduler connected to the silent Redis");
      // the campaign waited for the warm-up's bound (a slower machine only makes this later)
      assertTrue(elected - before >= SESSION_TIMEOUT_MS - 200, "elected " + (elected - before) + " ms after the start, before the warm-up's bound of "
          + SESSION_TIMEOUT_MS + " ms");
      TestEnv.awaitTrue(Duration.ofSeconds(10), "the leader's term row names it", () -> env.query("SELECT leader_id FROM $S.scheduler_term WHERE id = 1")
          .get(0)[0].equals(env.name + "-s1"));
    } finally {
      for (Socket c : held) c.close();
    }
  }
}
