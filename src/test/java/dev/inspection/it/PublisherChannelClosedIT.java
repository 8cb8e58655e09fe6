package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitResult;
import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.inspection.messaging.Priority;
import dev.inspection.outbox.CheckResult;
import dev.inspection.outbox.OutboxPublisher;
import dev.inspection.outbox.OutboxRow;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A publishing channel the broker closes while the connection stays up (here: the exchange deleted under the probe, so
 * the next publish is refused with 404) must not leave the publisher waiting on it for ever: the connection is closed,
 * and on the next connection the topology is declared again and the unconfirmed rows go out.
 */
class PublisherChannelClosedIT {
  @Test
  void aChannelTheBrokerClosesClosesTheConnectionAndTheRowsGoOutOnTheNext() throws Exception {
    try (TestEnv env = new TestEnv(1); PublisherRig rig = new PublisherRig(env, "closed")) {
      OutboxPublisher publisher = rig.start(new OutboxPublisher.Settings(20_000, 60_000, 1, 100, 262_144, 50, 0, 0, 0), p -> {});
      try (Channel ch = rig.conn.createChannel()) {
        ch.exchangeDelete(rig.topology.exchange());
      }
      List<CheckResult> results = new ArrayList<>();
      for (int i = 0; i < 3; i++) results.add(new CheckResult("c" + i, 0, Priority.NORMAL, Instant.now(), 0, 1, 1, new JsonObject().put("status", "UP")));
      List<OutboxRow> rows = awaitResult(rig.outbox.append(results));
      rig.ctx.runOnContext(v -> publisher.rowsAppended(rows));

      // the broker refuses the publish and closes the channel; the publisher closes the connection (which the probe's
      // connector then opens again) instead of waiting on a closed channel
      awaitTrue(Duration.ofSeconds(15), "the publisher's connection closed after the broker closed its channel", () -> !rig.conn.isOpen());
      assertEquals(3, awaitResult(rig.outbox.stats()).depth(), "nothing was confirmed");

      // the next connection, as the connector makes it: the topology is declared again and the three rows go out
      ConnectionFactory f = new ConnectionFactory();
      f.setHost("127.0.0.1");
      f.setAutomaticRecoveryEnabled(false);
      try (Connection next = f.newConnection(env.name + "-closed-2")) {
        rig.ctx.runOnContext(v -> {
          publisher.onLost();
          publisher.onConnected(next);
        });
        awaitTrue(Duration.ofSeconds(15), "the three rows confirmed on the next connection", () -> awaitResult(rig.outbox.stats()).depth() == 0);
        try (Channel ch = next.createChannel()) {
          assertEquals(1, ch.queueDeclarePassive(rig.topology.queue(0, Priority.NORMAL)).getMessageCount(), "one message of the three results in the slot's queue");
        }
        rig.ctx.runOnContext(v -> publisher.stop());
      }
    }
  }
}
