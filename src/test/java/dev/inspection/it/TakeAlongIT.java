package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static dev.inspection.it.TestEnv.publish;
import static dev.inspection.it.WorkerIT.devicesIn;
import static dev.inspection.it.WorkerIT.envelope;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.Channel;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.Topology;
import dev.inspection.node.Node;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@code worker.commit.take.along} on the real PostgreSQL and RabbitMQ: a batch transaction that starts while none is in flight
 * takes along the slots' batches that are waiting out their linger, so they commit in its transaction (the rows share its
 * {@code xmin}); with the take-along off they wait their linger and commit in transactions of their own.
 */
class TakeAlongIT {
  private static final int SLOTS = 4;

  /**
   * Every slot's first batch goes at once (one message); then one message in each of slots 1..3 waits out the linger, and two
   * messages of slot 0 (worker.batch.max = 2) make its batch due at once. Returns the xmin of each slot's second-round rows.
   */
  private static List<String> secondRound(TestEnv env, Map<String, String> flags) throws Exception {
    try (Channel ch = env.channel()) {
      Map<String, String> all = new java.util.HashMap<>(Map.of("role", "worker", "node.id", env.name + "-w", "worker.batch.max", "2"));
      all.putAll(flags);
      Node worker = env.start(all);
      env.awaitConsuming();
      Topology t = env.topology();
      List<List<String>> devices = new ArrayList<>();
      for (int s = 0; s < SLOTS; s++) devices.add(devicesIn(s, SLOTS, 1, "s" + s + "-"));
      for (int s = 0; s < SLOTS; s++) publish(ch, t, envelope(devices.get(s).get(0), SLOTS, 100, 1, "UP"));
      awaitTrue(Duration.ofSeconds(30), "every slot's first batch committed", () -> env.queryLong("SELECT count(*) FROM $S.device_status_current") == SLOTS);
      // the same devices again: the worker knows them now (an unknown device's inventory lookup is a query of its own, and a slot
      // whose batch waits for one hands it in after the take-along has started the transaction)
      for (int s = 1; s < SLOTS; s++) publish(ch, t, envelope(devices.get(s).get(0), SLOTS, 200, 2, "UP"));
      awaitTrue(Duration.ofSeconds(30), "slots 1..3 hold their message (delivered, not committed)", () -> {
        for (int s = 1; s < SLOTS; s++) if (env.ready(s, Priority.NORMAL) > 0) return false;
        return true;
      });
      assertEquals(SLOTS, env.queryLong("SELECT count(*) FROM $S.device_status_history"), "nothing of slots 1..3 committed before slot 0's batch");
      publish(ch, t, envelope(devices.get(0).get(0), SLOTS, 200, 2, "UP"));
      publish(ch, t, envelope(devices.get(0).get(0), SLOTS, 300, 3, "UP"));
      awaitTrue(Duration.ofSeconds(30), "the second round committed", () -> env.queryLong("SELECT count(*) FROM $S.device_status_history") == SLOTS + 5);
      List<String> xmins = new ArrayList<>();
      for (int s = 0; s < SLOTS; s++) {
        xmins.add(String.valueOf(env.query("SELECT xmin::text FROM $S.device_status_current WHERE device_id = '" + devices.get(s).get(0) + "'").get(0)[0]));
      }
      assertEquals(3L, env.queryLong("SELECT seq FROM $S.device_status_current WHERE device_id = '" + devices.get(0).get(0) + "'"),
          "slot 0's two results in one batch, the newer one current");
      env.stop(worker);
      assertEquals(0, env.readyTotal(), "every message was acked (an unacked one goes back to its queue when the worker's channels close)");
      return xmins;
    }
  }

  @Test
  void aCommitWithNoneInFlightTakesTheLingeringSlotsBatchesIntoItsTransaction() throws Exception {
    try (TestEnv env = new TestEnv(SLOTS)) {
      // a ten-minute linger: without the take-along slots 1..3 would not commit within the test's wait
      List<String> xmins = secondRound(env, Map.of("worker.batch.linger.ms", "600000"));
      assertEquals(1, new HashSet<>(xmins).size(), "slot 0's batch took slots 1..3 along into its transaction: " + xmins);
    }
  }

  @Test
  void withTheTakeAlongOffALingeringBatchWaitsItsLingerAndCommitsOnItsOwn() throws Exception {
    try (TestEnv env = new TestEnv(SLOTS)) {
      List<String> xmins = secondRound(env, Map.of("worker.batch.linger.ms", "8000", "worker.commit.take.along", "false"));
      Set<String> others = new HashSet<>(xmins.subList(1, SLOTS));
      assertTrue(!others.contains(xmins.get(0)), "slots 1..3 committed apart from slot 0's batch: " + xmins);
    }
  }
}
