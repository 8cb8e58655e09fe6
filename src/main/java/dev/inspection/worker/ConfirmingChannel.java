package dev.inspection.worker;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A publishing channel with confirms, on a thread of its own: each {@link #publish} opens the channel when
 * needed, sends, and waits for the broker's confirms; a nack, a timeout, no connection or a message the broker
 * returned (mandatory and unroutable) fails the future. Shared by the dead letters and the back-fill spill.
 */
final class ConfirmingChannel {
  /** What one publish sends on the channel. */
  interface Sends {
    void on(Channel ch) throws IOException;
  }

  private final WorkerExecutor thread;
  private final String what;
  private final AtomicBoolean returned = new AtomicBoolean();
  private Connection connection;
  private Channel channel;

  /** {@code what}: what is published, for the errors ("dead letters", "the back-fill spill"). */
  ConfirmingChannel(Vertx vertx, String name, String what) {
    this.thread = vertx.createSharedWorkerExecutor(name + "-" + System.identityHashCode(this), 1);
    this.what = what;
  }

  void use(Connection c) {
    thread.executeBlocking(() -> {
      connection = c;
      channel = null;
      return null;
    }, true);
  }

  Future<Void> publish(Sends sends) {
    return thread.executeBlocking(() -> {
      if (channel == null || !channel.isOpen()) {
        if (connection == null || !connection.isOpen()) throw new IllegalStateException("no RabbitMQ connection for " + what);
        channel = connection.createChannel();
        channel.confirmSelect();
        channel.addReturnListener(r -> returned.set(true));
      }
      returned.set(false);
      sends.on(channel);
      channel.waitForConfirmsOrDie(10_000);
      // a return comes before the confirm: an unroutable message is not a stored one
      if (returned.get()) throw new IllegalStateException(what + ": the broker returned a message it could not route");
      return null;
    }, true).mapEmpty();
  }

  void close() {
    thread.close();
  }
}
