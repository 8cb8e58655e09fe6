package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.inspection.it.TestEnv;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import dev.inspection.worker.SlotConsumers.Delivery;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.internal.VertxInternal;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A slot's settles reach the broker in the order they were asked for, whichever Vert.x context asks (the bench's
 * {@code ack of tag 854 (multiple) not held} ERROR, issue 11): {@code executeBlocking(..., ordered=true)} orders tasks per
 * calling context only, and with the worker's one ack thread a context whose run is already queued there takes a task it
 * is handed later ahead of another context's earlier one. Against the real broker: the second batch's multiple ack must not
 * go first and settle the first batch's deliveries, and nothing may be refused or left unacked.
 */
class SlotConsumersIT {

  @Test
  void settlesOfOneSlotAskedFromTwoContextsRunInTheOrderAsked() throws Exception {
    Vertx vertx = Vertx.vertx();
    try (TestEnv env = new TestEnv(1)) {
      Topology topology = new Topology(env.name, 1, 20_000_000, 20);
      ConnectionFactory factory = new ConnectionFactory();
      factory.setHost("127.0.0.1");
      Connection conn = factory.newConnection(env.name + "-slot-consumers");
      try (Channel ch = conn.createChannel()) {
        topology.declare(ch);
        ch.confirmSelect();
        for (int i = 0; i < 4; i++) {
          ch.basicPublish(topology.exchange(), topology.routingKey(0, Priority.NORMAL), new AMQP.BasicProperties.Builder().deliveryMode(2).build(),
              ("m" + i).getBytes());
        }
        ch.waitForConfirms(10_000);
      }
      WorkerExecutor acks = vertx.createSharedWorkerExecutor("it-acks-" + env.name, 1);
      WorkerExecutor opens = vertx.createSharedWorkerExecutor("it-opens-" + env.name, 1);
      Metrics metrics = Metrics.prometheus();
      List<Delivery> delivered = new CopyOnWriteArrayList<>();
      VertxInternal vx = (VertxInternal) vertx;
      Context slotContext = vx.createEventLoopContext();
      SlotConsumers consumers = on(slotContext, () -> new SlotConsumers(vertx, 0, 1, "it-worker", topology, new SlotConsumers.Prefetch(10, 10, 10),
          () -> conn, acks, opens, metrics, delivered::add));
      on(slotContext, () -> consumers.open()).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      TestEnv.awaitTrue(Duration.ofSeconds(10), "4 deliveries", () -> delivered.size() == 4);

      // the ack thread busy; context x's run queued behind it; then the first batch asked from context y, the second from x
      Context busy = vx.createEventLoopContext();
      Context x = vx.createEventLoopContext();
      Context y = vx.createEventLoopContext();
      CountDownLatch running = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      on(busy, () -> acks.executeBlocking(() -> {
        running.countDown();
        return release.await(30, TimeUnit.SECONDS);
      }, true));
      running.await(10, TimeUnit.SECONDS);
      on(x, () -> acks.executeBlocking(() -> null, true));
      on(y, () -> consumers.settle(settles(delivered.subList(0, 2))));
      on(x, () -> consumers.settle(settles(delivered.subList(2, 4))));
      release.countDown();
      on(slotContext, consumers::acked).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      // and whatever else the ack thread was handed (a context of its own queues behind every run queued before it)
      on(vx.createEventLoopContext(), () -> acks.executeBlocking(() -> null, true)).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);

      assertEquals(0.0, metrics.count("worker_ack_refused_total"), "no settle named a tag its channel no longer held");
      assertEquals(2.0, metrics.count("worker_ack_calls_total"), "one multiple ack per batch, the first batch's first");
      on(slotContext, () -> {
        consumers.close();
        return null;
      });
      // closed channels return what they left unacked: nothing may come back
      TestEnv.awaitTrue(Duration.ofSeconds(10), "channels closed", () -> env.consumers(0, Priority.NORMAL) == 0);
      assertEquals(0, env.ready(0, Priority.NORMAL), "every delivery acked");
      acks.close();
      opens.close();
      conn.close();
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  private static List<AckPlan.Settle<Channel>> settles(List<Delivery> batch) {
    return batch.stream().map(d -> new AckPlan.Settle<>(d.channel(), d.tag(), AckPlan.Outcome.ACK)).toList();
  }

  /** Runs {@code call} on {@code context} and returns what it returned, once it has. */
  private static <T> T on(Context context, java.util.concurrent.Callable<T> call) throws Exception {
    CompletableFuture<T> done = new CompletableFuture<>();
    context.runOnContext(v -> {
      try {
        done.complete(call.call());
      } catch (Throwable e) {
        done.completeExceptionally(e);
      }
    });
    return done.get(10, TimeUnit.SECONDS);
  }
}
