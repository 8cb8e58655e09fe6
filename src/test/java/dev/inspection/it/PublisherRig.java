package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitResult;
import static dev.inspection.it.TestEnv.awaitTrue;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import dev.inspection.outbox.Outbox;
import dev.inspection.outbox.OutboxPublisher;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/** An outbox and its publisher on the real broker, without a probe around them: for the ITs of the publishing path. */
final class PublisherRig implements AutoCloseable {
  final Vertx vertx = Vertx.vertx();
  final Context ctx = vertx.getOrCreateContext();
  final Topology topology;
  final Path file;
  final Outbox outbox;
  final Connection conn;
  private volatile OutboxPublisher publisher;

  /** Declares the env's topology and opens an outbox file {@code name}.db in its data directory. */
  PublisherRig(TestEnv env, String name) throws Exception {
    topology = env.topology();
    ConnectionFactory f = new ConnectionFactory();
    f.setHost("127.0.0.1");
    f.setAutomaticRecoveryEnabled(false);
    conn = f.newConnection(env.name + "-" + name);
    try (Channel ch = conn.createChannel()) {
      topology.declare(ch);
    }
    file = env.dataDir.resolve(name + ".db");
    outbox = awaitResult(Outbox.open(vertx, file, env.name + "-p", topology, Clock.systemUTC()));
  }

  /** Starts the publisher on the rig's context, runs {@code first} there right after it connects, and waits until it is connected. */
  OutboxPublisher start(OutboxPublisher.Settings settings, Consumer<OutboxPublisher> first) {
    ctx.runOnContext(v -> {
      OutboxPublisher p = new OutboxPublisher(vertx, outbox, topology, Metrics.prometheus(), Clock.systemUTC(), settings);
      p.onConnected(conn);
      first.accept(p);
      publisher = p;
    });
    awaitTrue(Duration.ofSeconds(10), "publisher connected", () -> publisher != null && publisher.connected());
    return publisher;
  }

  @Override
  public void close() throws Exception {
    try {
      OutboxPublisher p = publisher;
      if (p != null) ctx.runOnContext(v -> p.stop());
      awaitResult(outbox.closeAsync());
      if (conn.isOpen()) conn.close();
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
