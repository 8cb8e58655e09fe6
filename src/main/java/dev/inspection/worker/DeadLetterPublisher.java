package dev.inspection.worker;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Connection;
import dev.inspection.messaging.DeadLetterHeaders;
import dev.inspection.messaging.Topology;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;

/**
 * Sets aside messages that can never be processed: publishes a copy to the dead-letter exchange with
 * its reason in headers and waits for the broker's confirm; only then may the original be acked, so a
 * bad message is never lost and never blocks its queue. A result forwarded to another slot in a reshard goes
 * the same way (published, confirmed, then the original acked), to the status exchange.
 */
public final class DeadLetterPublisher {
  /**
   * One message to set aside; with {@code forwardTo} (a routing key of the status exchange) a result sent on to
   * the slot its device moved to in a reshard ({@link ResultGuard.Forward}) instead of to the dead-letter exchange.
   */
  public record DeadLetter(byte[] body, String reason, String detail, String routingKey, String queue, String forwardTo) {
    public DeadLetter(byte[] body, String reason, String detail, String routingKey, String queue) {
      this(body, reason, detail, routingKey, queue, null);
    }
  }

  private final ConfirmingChannel out;
  private final Topology topology;
  private final String workerId;

  public DeadLetterPublisher(Vertx vertx, Topology topology, String workerId) {
    this.out = new ConfirmingChannel(vertx, "dead-letters-" + workerId, "dead letters");
    this.topology = topology;
    this.workerId = workerId;
  }

  public void use(Connection c) {
    out.use(c);
  }

  public Future<Void> publish(List<DeadLetter> letters) {
    return out.publish(channel -> {
      for (DeadLetter d : letters) {
        if (d.forwardTo() != null) {
          channel.basicPublish(topology.exchange(), d.forwardTo(), new AMQP.BasicProperties.Builder().deliveryMode(2).build(), d.body());
          continue;
        }
        AMQP.BasicProperties props = DeadLetterHeaders.of(d.reason(), d.detail(), d.routingKey(), d.queue(), workerId, System.currentTimeMillis());
        channel.basicPublish(topology.deadLetterExchange(), d.reason(), props, d.body());
      }
    });
  }

  public void close() {
    out.close();
  }
}
