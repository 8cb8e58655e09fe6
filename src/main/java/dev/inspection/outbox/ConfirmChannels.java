package dev.inspection.outbox;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.Connection;
import dev.inspection.messaging.ChannelClose;
import dev.inspection.messaging.Topology;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The publisher's confirm channels: opened on one connection, each reporting its settlements by index. Blocking: call off the event loop. */
final class ConfirmChannels {
  private static final Logger log = LoggerFactory.getLogger(ConfirmChannels.class);
  /** A settlement of channel {@code channel}: ack or nack of {@code tag} (and every tag below it when {@code multiple}). */
  interface Settle {
    void settle(int channel, long tag, boolean multiple, boolean ack);
  }

  private ConfirmChannels() {}

  /**
   * Opens {@code count} channels in confirm mode; the first declares the topology. Returned messages report their message id.
   * A channel the broker closes while the connection stays up (a publish to an exchange deleted under the probe, a
   * permission taken away) would leave the publisher waiting on it for ever, its rows unconfirmed: the connection is
   * aborted then, so the probe reconnects, declares the topology again and the outbox publishes what was not confirmed.
   */
  static List<Channel> open(Connection conn, Topology topology, int count, Settle settle, Consumer<String> returnedMessageId) throws IOException {
    List<Channel> opened = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      Channel ch = conn.createChannel();
      if (i == 0) topology.declare(ch);
      ch.confirmSelect();
      int index = i;
      ch.addConfirmListener(new ConfirmListener() {
        @Override
        public void handleAck(long tag, boolean multiple) {
          settle.settle(index, tag, multiple, true);
        }

        @Override
        public void handleNack(long tag, boolean multiple) {
          settle.settle(index, tag, multiple, false);
        }
      });
      ch.addShutdownListener(cause -> {
        if (!ChannelClose.byBrokerAlone(cause)) return; // the connection's loss, or our own close
        log.warn("the broker closed outbox publishing channel {} ({}); closing the connection to reconnect, declare the topology "
            + "again and publish the unconfirmed rows", index, cause.getMessage());
        // not on the client's thread, which runs this listener and must stay free to complete the close
        Thread closer = new Thread(() -> conn.abort(AMQP.CONNECTION_FORCED, "outbox publishing channel closed by the broker", 5000),
            "outbox-channel-closed");
        closer.setDaemon(true);
        closer.start();
      });
      ch.addReturnListener(r -> {
        if (r.getProperties().getMessageId() != null) returnedMessageId.accept(r.getProperties().getMessageId());
      });
      opened.add(ch);
    }
    return opened;
  }

  /** A routing key's channel (its slot's, {@code slot.{n}.{prio}}), so a device's rows reach the broker in seq order. */
  static int of(String routingKey, int count) {
    int a = routingKey.indexOf('.');
    int b = routingKey.indexOf('.', a + 1);
    return Integer.parseInt(routingKey, a + 1, b, 10) % count;
  }
}
