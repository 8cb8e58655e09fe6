package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.rabbitmq.client.Channel;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.Topology;
import dev.inspection.node.Node;
import dev.inspection.scheduler.QueueSampler;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The leader's queue sample skips the slots whose owner reports them quiet (issue 11, idle cost) and still sees a
 * backlog as soon as one builds: a worker whose commits are held by a table lock fills its prefetch, its heartbeat
 * stops calling the slot quiet, and the next sample asks the broker for it again.
 */
class QueueSampleIT {
  private static final int SLOTS = 2;
  private static final int PREFETCH = 3;
  private static final int MESSAGES = 30;

  @Test
  void quietSlotsAreNotAskedForAndABacklogIsSeenAtTheNextHeartbeat() throws Exception {
    try (TestEnv env = new TestEnv(SLOTS); Channel ch = env.channel()) {
      // full samples only every 10 minutes: what the test sees in between is the quiet rule's alone
      Node sched = env.start(Map.of("role", "scheduler", "node.id", env.name + "-sched", "scheduler.queue.sample.ms", "500",
          "scheduler.queue.sample.full.ms", "600000"));
      // history's lock timeout off: the commits wait on the lock below, as any commit does on a lock that is not history's
      env.start(Map.of("role", "worker", "node.id", env.name + "-w", "worker.prefetch.normal", Integer.toString(PREFETCH),
          "worker.degraded.history.lock.timeout.ms", "0"));
      env.awaitConsuming();
      QueueSampler q = sched.scheduler().queues();
      awaitTrue(Duration.ofSeconds(20), "both idle slots skipped by the sample", () -> q.skipped() == SLOTS && q.depth(0) == 0,
          () -> "skipped " + q.skipped() + ", depth(0) " + q.depth(0));

      Topology t = env.topology();
      ch.confirmSelect();
      List<String> devices = WorkerIT.devicesIn(0, SLOTS, MESSAGES, "q-");
      long cycle = System.currentTimeMillis() - 60_000;
      try (TestEnv.Held lock = env.hold("LOCK TABLE $S.device_status_history IN ACCESS EXCLUSIVE MODE")) {
        long t0 = System.currentTimeMillis();
        for (String d : devices) TestEnv.publish(ch, t, WorkerIT.envelope(d, SLOTS, cycle, 1, "UP"));
        ch.waitForConfirmsOrDie(10_000);
        // the worker holds its prefetch while the first commit waits on the lock; the rest waits ready in the broker
        awaitTrue(Duration.ofSeconds(20), "the broker holds slot 0's backlog", () -> env.ready(0, Priority.NORMAL) >= MESSAGES - PREFETCH - 1);
        awaitTrue(Duration.ofSeconds(20), "the heartbeat calls slot 1 quiet and slot 0 not", () -> quietInHeartbeat(env, 1) && !quietInHeartbeat(env, 0),
            () -> heartbeat(env));
        // a sample that asks for slot 0 and still skips slot 1: slot 0 is asked for because its owner stopped calling it
        // quiet, not because a stale heartbeat or round made the sample fall back to asking for everything (a loaded
        // machine may have such samples too; one of the right kind is what the rule promises)
        awaitTrue(Duration.ofSeconds(20), "a sample sees slot 0's backlog while skipping slot 1", () -> q.depth(0) >= MESSAGES - PREFETCH - 1
            && q.skipped() == 1, () -> "depth(0) " + q.depth(0) + ", skipped " + q.skipped() + ", broker ready " + env.ready(0, Priority.NORMAL) + ", heartbeat " + heartbeat(env));
        System.out.printf("queue sample: slot 0's backlog of %d seen %d ms after it was published; %d slot(s) still skipped%n", q.depth(0),
            System.currentTimeMillis() - t0, q.skipped());
      }
      awaitTrue(Duration.ofSeconds(30), "every result committed", () -> env.queryLong("SELECT count(*) FROM $S.device_status_current") == MESSAGES);
      awaitTrue(Duration.ofSeconds(20), "both slots quiet and skipped again", () -> q.skipped() == SLOTS && q.depth(0) == 0,
          () -> "skipped " + q.skipped() + ", depth(0) " + q.depth(0));
      assertEquals(0, env.ready(0, Priority.NORMAL), "nothing ready in the broker either");
    }
  }

  private static String heartbeat(TestEnv env) throws Exception {
    return String.valueOf(env.query("SELECT backlog_metrics->'slots' FROM $S.worker_heartbeat").get(0)[0]);
  }

  private static boolean quietInHeartbeat(TestEnv env, int slot) throws Exception {
    return env.queryLong("SELECT count(*) FROM $S.worker_heartbeat WHERE (backlog_metrics->'slots'->'" + slot + "'->>'quiet')::boolean") == 1;
  }
}
