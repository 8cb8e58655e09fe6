package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.inspection.messaging.Topology;
import dev.inspection.node.Node;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The scheduler's desks go on keeping what reaches their queues when their consumer stops while the connection stays up:
 * here each queue is deleted under its desk (the broker cancels the consumer) and declared again, as a worker does when it
 * connects. Before, a desk kept nothing more until its next reconnect, and its messages piled up in the queue unseen by
 * operators; the gauge {@code scheduler_desk_consuming{desk}} says which it is.
 */
class DeskConsumerIT {
  @Test
  void theDesksConsumeAgainAfterTheirQueuesAreDeletedAndDeclaredAgain() throws Exception {
    try (TestEnv env = new TestEnv(1)) {
      Node node = env.start(Map.of("role", "all", "node.id", env.name + "-a"));
      Topology t = env.topology();
      try (Channel ch = env.channel()) {
        ch.confirmSelect();
        letter(ch, t, "before");
        shedReport(ch, t, "dev-before");
        awaitTrue(Duration.ofSeconds(30), "the first letter and report kept", () -> letters(env) == 1 && shed(env) == 1);
        assertTrue(consuming(node, "dead_letters", 1) && consuming(node, "shed", 1), "both desks say they consume");

        ch.queueDelete(t.deadLetterQueue()); // the broker cancels the desks' consumers
        ch.queueDelete(t.shedQueue());
        // RabbitMQ 3.10 loses the cancel of a quorum queue's consumer when the queue is declared again at once: a worker
        // declares them when it connects, which is later than the desks hear of the deletion
        awaitTrue(Duration.ofSeconds(30), "the desks say they do not consume",
            () -> consuming(node, "dead_letters", 0) && consuming(node, "shed", 0));
        t.declare(ch); // as a worker does on connecting
        awaitTrue(Duration.ofSeconds(30), "the desks consume again", () -> consuming(node, "dead_letters", 1) && consuming(node, "shed", 1));
        letter(ch, t, "after-1");
        letter(ch, t, "after-2");
        shedReport(ch, t, "dev-after");
        awaitTrue(Duration.ofSeconds(30), "what came after the queues came back kept", () -> letters(env) == 3 && shed(env) == 2);
        awaitTrue(Duration.ofSeconds(30), "nothing left in the queues",
            () -> ch.queueDeclarePassive(t.deadLetterQueue()).getMessageCount() == 0 && ch.queueDeclarePassive(t.shedQueue()).getMessageCount() == 0);
        assertEquals(3, env.queryLong("SELECT count(DISTINCT detail) FROM $S.dead_letter"), "each letter kept once");
      }
    }
  }

  private static void letter(Channel ch, Topology t, String text) throws Exception {
    ch.basicPublish(t.deadLetterExchange(), "", new AMQP.BasicProperties.Builder().deliveryMode(2)
        .headers(Map.of("x-dead-reason", "it_test", "x-dead-detail", text)).build(), text.getBytes(StandardCharsets.UTF_8));
    ch.waitForConfirmsOrDie(10_000);
  }

  private static void shedReport(Channel ch, Topology t, String device) throws Exception {
    JsonObject report = new JsonObject().put("probe_id", "it-probe").put("entries", new JsonArray().add(new JsonObject()
        .put("device_id", device).put("minute", 1_764_000_000_000L).put("priority", 2).put("count", 3)));
    ch.basicPublish("", t.shedQueue(), new AMQP.BasicProperties.Builder().deliveryMode(2).build(), report.encode().getBytes(StandardCharsets.UTF_8));
    ch.waitForConfirmsOrDie(10_000);
  }

  private static boolean consuming(Node node, String desk, int value) {
    return TestEnv.hasSample(node.metrics().scrape(), "scheduler_desk_consuming", value + ".0", "desk=\"" + desk + "\"");
  }

  private static long letters(TestEnv env) throws Exception {
    return env.queryLong("SELECT count(*) FROM $S.dead_letter");
  }

  private static long shed(TestEnv env) throws Exception {
    return env.queryLong("SELECT count(*) FROM $S.shed_count");
  }
}
