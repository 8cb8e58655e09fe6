package dev.inspection.scheduler;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.ShutdownSignalException;
import dev.inspection.messaging.ChannelClose;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One queue a scheduler desk keeps (dead letters, shed reports), consumed on the scheduler's connection: once a worker or
 * probe has declared it (the scheduler only looks, so differing queue arguments never fail it; it looks again every 5 s), and
 * again when the consumer stops while the connection stays up (the broker cancels it because the queue was deleted, or
 * closes the channel on an error). Without that a desk kept nothing more until the next reconnect while its letters piled
 * up in the queue. The connection's loss is the connector's: it connects again and calls {@link #connected}.
 */
final class DeskConsumer {
  private static final Logger log = LoggerFactory.getLogger(DeskConsumer.class);
  static final long LOOK_AGAIN_MS = 5_000;

  /** A delivery, called on the AMQP client's thread with the channel it came on (the only one its tag can be acked on). */
  interface Delivery {
    void accept(Channel ch, Envelope env, AMQP.BasicProperties props, byte[] body);
  }

  private final Vertx vertx;
  private final Context context;
  private final WorkerExecutor amqp;
  private final String queue;
  private final int prefetch;
  private final String what;
  private final Delivery delivery;
  private volatile Connection connection;
  /** The channel consumed on; set on the AMQP thread before the first delivery, read on the desk's context. */
  private volatile Channel channel;

  /** When the consumer stops, {@link #channel} turns null and the stopped channel's unacked deliveries go back to the queue. */
  DeskConsumer(Vertx vertx, Context context, WorkerExecutor amqp, String queue, int prefetch, String what, Delivery delivery) {
    this.vertx = vertx;
    this.context = context;
    this.amqp = amqp;
    this.queue = queue;
    this.prefetch = prefetch;
    this.what = what;
    this.delivery = delivery;
  }

  void connected(Connection c) {
    connection = c;
    consume(c);
  }

  Connection connection() {
    return connection;
  }

  /** The channel consumed on now (null while none). */
  Channel channel() {
    return channel;
  }

  boolean consuming() {
    Channel ch = channel;
    return ch != null && ch.isOpen();
  }

  private void consume(Connection c) {
    amqp.executeBlocking(() -> {
      if (c != connection || !c.isOpen()) return null;
      Channel look = c.createChannel();
      try {
        look.queueDeclarePassive(queue);
      } catch (IOException notYet) {
        vertx.setTimer(LOOK_AGAIN_MS, t -> consume(c)); // nobody has declared it yet
        return null;
      } finally {
        if (look.isOpen()) look.close();
      }
      Channel ch = c.createChannel();
      ch.basicQos(prefetch);
      channel = ch;
      ch.basicConsume(queue, false, new DefaultConsumer(ch) {
        @Override
        public void handleDelivery(String tag, Envelope env, AMQP.BasicProperties props, byte[] body) {
          delivery.accept(ch, env, props, body);
        }

        @Override
        public void handleCancel(String consumerTag) {
          consumeAgain(c, ch, "the broker cancelled the consumer of " + queue + " (the queue deleted?)");
        }

        @Override
        public void handleShutdownSignal(String consumerTag, ShutdownSignalException sig) {
          if (ChannelClose.byBrokerAlone(sig)) consumeAgain(c, ch, "the broker closed the channel of " + queue + ": " + sig.getMessage());
        }
      });
      log.info("consuming {} {}", what, queue);
      return null;
    }, true).onFailure(e -> {
      log.warn("cannot consume {} {} yet ({}); trying again in {} ms", what, queue, e.toString(), LOOK_AGAIN_MS);
      vertx.setTimer(LOOK_AGAIN_MS, t -> consume(c)); // does nothing once the connection is gone: the next one calls connected
    });
  }

  private void consumeAgain(Connection c, Channel old, String why) {
    context.runOnContext(v -> {
      if (old != channel) return;
      channel = null;
      log.warn("{}; what it had not acked goes back to the queue, consuming it again once it exists", why);
      if (old.isOpen()) amqp.executeBlocking(() -> {
        old.abort(); // a cancelled consumer's channel: its unacked deliveries go back to the queue
        return null;
      }, true);
      vertx.setTimer(1000, t -> consume(c));
    });
  }
}
