package dev.inspection.worker;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Connection;
import dev.inspection.messaging.Topology;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;

/**
 * Publishes spilled batches ({@link Spill}) to the back-fill queue and waits for the broker's confirms; only then
 * may the deliveries they came from be acked. A failure (no connection, a nack, a timeout) fails the future: the
 * deliveries are not acked and come back, and their redelivery writes everything again idempotently (D4).
 */
public final class SpillPublisher {
  private final ConfirmingChannel out;
  private final Topology topology;

  public SpillPublisher(Vertx vertx, Topology topology, String workerId) {
    this.out = new ConfirmingChannel(vertx, "spill-" + workerId, "the back-fill spill to " + topology.backfillQueue());
    this.topology = topology;
  }

  public void use(Connection c) {
    out.use(c);
  }

  public Future<Void> publish(List<Spill.Batch> batches) {
    if (batches.isEmpty()) return Future.succeededFuture();
    List<byte[]> bodies = batches.stream().map(Spill::encode).toList(); // encoded on the caller's thread: the rows are not shared after this
    AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().deliveryMode(2).contentType("application/json").build();
    // mandatory: a spill the broker cannot route (the queue is gone) comes back and fails the publish
    return out.publish(channel -> {
      for (byte[] b : bodies) channel.basicPublish("", topology.backfillQueue(), true, props, b);
    });
  }

  public void close() {
    out.close();
  }
}
