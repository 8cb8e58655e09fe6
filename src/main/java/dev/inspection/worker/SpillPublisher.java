package dev.inspection.worker;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.inspection.messaging.Topology;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Publishes spilled batches ({@link Spill}) to the back-fill queue and waits for the broker's confirms; only then
 * may the deliveries they came from be acked. A failure (no connection, a nack, a timeout) fails the future: the
 * deliveries are not acked and come back, and their redelivery writes everything again idempotently (D4).
 */
public final class SpillPublisher {
  private final WorkerExecutor thread;
  private final Topology topology;
  private Connection connection;
  private Channel channel;
  private final AtomicBoolean returned = new AtomicBoolean();

  public SpillPublisher(Vertx vertx, Topology topology, String workerId) {
    this.thread = vertx.createSharedWorkerExecutor("spill-" + workerId + "-" + System.identityHashCode(this), 1);
    this.topology = topology;
  }

  public void use(Connection c) {
    thread.executeBlocking(() -> {
      connection = c;
      channel = null;
      return null;
    }, true);
  }

  public Future<Void> publish(List<Spill.Batch> batches) {
    if (batches.isEmpty()) return Future.succeededFuture();
    List<byte[]> bodies = batches.stream().map(Spill::encode).toList(); // encoded on the caller's thread: the rows are not shared after this
    return thread.executeBlocking(() -> {
      if (channel == null || !channel.isOpen()) {
        if (connection == null || !connection.isOpen()) throw new IllegalStateException("no RabbitMQ connection for the back-fill spill");
        channel = connection.createChannel();
        channel.confirmSelect();
        channel.addReturnListener(r -> returned.set(true));
      }
      returned.set(false);
      AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().deliveryMode(2).contentType("application/json").build();
      for (byte[] b : bodies) channel.basicPublish("", topology.backfillQueue(), true, props, b);
      channel.waitForConfirmsOrDie(10_000);
      // a return comes before the confirm: an unroutable spill (the queue is gone) is not a stored one
      if (returned.get()) throw new IllegalStateException("the back-fill queue " + topology.backfillQueue() + " does not exist: spill returned");
      return null;
    }, true).mapEmpty();
  }

  public void close() {
    thread.close();
  }
}
