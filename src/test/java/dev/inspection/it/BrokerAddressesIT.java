package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.inspection.messaging.BrokerConnections;
import dev.inspection.messaging.BrokerFence;
import dev.inspection.node.Node;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A list of broker nodes (rabbit.addresses, rabbit.management.url): a node that does not answer is passed over. */
class BrokerAddressesIT {
  /** Nothing listens on port 1: the first node of each list is a dead one. */
  private static final String DEAD_FIRST = "127.0.0.1:1,127.0.0.1:5672";

  @Test
  void aNodeWhoseFirstBrokerIsDeadConnectsToTheNextAndPublishes() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      Map<String, String> addresses = Map.of("rabbit.addresses", DEAD_FIRST, "rabbit.management.url", "http://127.0.0.1:1,http://127.0.0.1:15672");
      String probeId = env.name + "-probe";
      env.start(with(addresses, "role", "worker", "node.id", env.name + "-w1"));
      Node probe = env.start(with(addresses, "role", "probe", "node.id", probeId, "probe.sim.devices", "100", "probe.interval.ms", "300"));
      awaitTrue(Duration.ofSeconds(90), "every device has two results in history", () -> env.queryLong(
          "SELECT count(*) FROM (SELECT device_id FROM $S.device_status_history GROUP BY device_id HAVING count(*) >= 2) x") == 100);
      assertTrue(probe.metrics().count("outbox_published_total") >= 200, "the probe published through the second node");

      Ledger.Report r = env.drainAndBalance(probe, probeId, addresses);
      assertTrue(r.produced() >= 200, r.toString());
    }
  }

  @Test
  void theBrokerFenceTriesEachManagementUrlUntilOneAnswers() throws Exception {
    try (TestEnv env = new TestEnv(1)) {
      String workerId = env.name + "-w9";
      ConnectionFactory f = new ConnectionFactory();
      f.setHost("127.0.0.1");
      f.setAutomaticRecoveryEnabled(false);
      Map<String, Object> props = new HashMap<>(f.getClientProperties());
      props.putAll(BrokerConnections.workerProperties(workerId, env.name));
      f.setClientProperties(props);
      Vertx vertx = Vertx.vertx();
      Connection worker = f.newConnection("worker-" + workerId);
      try {
        BrokerFence fence = new BrokerFence(vertx, new BrokerFence.Settings(List.of("http://127.0.0.1:1", "http://127.0.0.1:15672"), "guest", "guest",
            "/", env.name));
        fence.check().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        // the management API lists a new connection only after its next statistics round (up to 5 s)
        AtomicInteger closed = new AtomicInteger();
        awaitTrue(Duration.ofSeconds(60), "the fence closed the worker's connection through the second URL", () -> {
          closed.set(fence.closeWorker(workerId, "BrokerAddressesIT").toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS));
          return closed.get() != 0;
        });
        assertEquals(1, closed.get(), "one connection closed (-1 would mean no URL answered)");
        awaitTrue(Duration.ofSeconds(30), "the broker closed it", () -> !worker.isOpen());
        fence.close();
      } finally {
        worker.abort();
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
    }
  }

  private static Map<String, String> with(Map<String, String> base, String... kv) {
    Map<String, String> m = new HashMap<>(base);
    for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
    return m;
  }
}
