package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.SlotHash;
import dev.inspection.messaging.Topology;
import dev.inspection.node.Node;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The broker takes a consumer away from a live connection (here: the queue is deleted and declared again, which
 * cancels the consumer; in a cluster drill a channel closed on an unknown delivery tag after a queue leader moved):
 * the worker opens the slot's consumers again instead of leaving that lane without one while the lease says ACTIVE.
 *
 * <p>The first result is committed before the queue is deleted: a quorum queue deleted within milliseconds of a
 * basic.consume (RabbitMQ 3.10) may not yet know the consumer and then sends no basic.cancel at all — the
 * consumer must have been served once for the broker to cancel it.
 */
class BrokenChannelIT {
  @Test
  void aConsumerTheBrokerCancelsIsOpenedAgainAndItsLaneIsConsumed() throws Exception {
    try (TestEnv env = new TestEnv(2); Channel ch = env.channel()) {
      Node worker = env.start(Map.of("role", "worker", "node.id", env.name + "-w"));
      env.awaitConsuming();
      Topology t = env.topology();
      String device = "broken-1";
      int slot = SlotHash.slotOf(device, 2);
      ch.confirmSelect();

      publish(ch, t, slot, device, 1);
      awaitTrue(Duration.ofSeconds(60), "the first result is committed (the lane's consumer is served)",
          () -> env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id = '" + device + "'") == 1);

      ch.queueDelete(t.queue(slot, Priority.NORMAL)); // the broker cancels the worker's consumer on it
      t.declare(ch);                                    // and the queue is back, empty, without a consumer
      awaitTrue(Duration.ofSeconds(60), "the worker saw the cancel", () -> worker.metrics().count("worker_channels_broken_total") >= 1);

      publish(ch, t, slot, device, 2);
      awaitTrue(Duration.ofSeconds(60), "the result on the re-created queue is committed",
          () -> env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id = '" + device + "'") == 2);
    }
  }

  private static void publish(Channel ch, Topology t, int slot, String device, long seq) throws Exception {
    long now = System.currentTimeMillis();
    Envelope e = new Envelope(Envelope.messageId("it-probe", 1, device, seq), device, slot, 1, 1, 1, "it-probe", 1, seq,
        Instant.ofEpochMilli(now), Priority.NORMAL, new JsonObject().put("status", "UP"));
    ch.basicPublish(t.exchange(), t.routingKey(slot, Priority.NORMAL), new AMQP.BasicProperties.Builder().deliveryMode(2).build(), e.toBytes());
    ch.waitForConfirmsOrDie(10_000);
  }
}
