package dev.inspection.worker;

import static dev.inspection.config.LogSetup.SLOT;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.ShutdownSignalException;
import dev.inspection.messaging.ChannelClose;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker side of one slot at one lease epoch: a channel and a consumer per priority queue (lane), each
 * with its own prefetch, and the acks. The order of things is what keeps a move free of redeliveries:
 * <ul>
 *   <li>a channel is registered before its consumer starts: a queue with a backlog delivers at once, and a
 *       delivery on an unknown channel would sit unacked (and invisible) until the channel closed;</li>
 *   <li>the consumer is also the channel's default consumer: a delivery the broker sends after the cancel
 *       (a quorum-queue race) reaches no consumer; caught there it joins the mailbox and is committed with
 *       the rest instead of being redelivered;</li>
 *   <li>cancel-ok is dispatched after every delivery of its consumer; even so a quorum queue can still hand
 *       over deliveries it sent before it processed the cancel, so the channels stay open until none has
 *       arrived for {@link #QUIET_MS} ({@link #quietRemainingMs});</li>
 *   <li>acks run on one thread (the worker's ack executor), a slot's settles one after another in the order asked for
 *       ({@link #settle}), a batch settled with one {@code basicAck(tag, multiple=true)} per channel where {@link AckPlan}
 *       allows it and the channel holds nothing else below that tag ({@link ChannelTags#ackBatch}); a settle naming a tag
 *       the channel does not hold is not sent ({@link ChannelTags}: the broker would close the channel over it).</li>
 * </ul>
 * Deliveries reach the owner's {@code sink} on its context; everything else here is called on that context.
 */
final class SlotConsumers {
  private static final Logger log = LoggerFactory.getLogger(SlotConsumers.class);
  static final long QUIET_MS = 150;
  static final long CANCEL_TIMEOUT_MS = 5_000;

  /** One message as the broker handed it over. */
  record Delivery(Channel channel, long tag, byte[] body, Priority priority, String routingKey) implements BatchHandler.Received {}

  /** Prefetch of each priority queue's consumer. */
  record Prefetch(int high, int normal, int low) {
    int of(Priority p) {
      return switch (p) {
        case HIGH -> high;
        case NORMAL -> normal;
        case LOW -> low;
      };
    }
  }

  private final Vertx vertx;
  private final Context context;
  private final int slot;
  private final long epoch;
  private final String workerId;
  private final Topology topology;
  private final Prefetch prefetch;
  private final Supplier<Connection> broker;
  private final WorkerExecutor acks;
  /** The worker's executor for opening consumers ({@code worker.consumer.open.threads}), shared by its slots. */
  private final WorkerExecutor opens;
  private final Metrics metrics;
  private final Consumer<Delivery> sink;
  private Consumer<String> broken = why -> { };

  /** Written by the opening worker thread, read on the context. */
  private final Map<Priority, Channel> channels = new ConcurrentHashMap<>();
  /** The tags each open channel holds unsettled ({@link ChannelTags}); a channel's entry goes once it is closed. */
  private final Map<Channel, ChannelTags> held = new ConcurrentHashMap<>();
  private final Set<Priority> cancelPending = EnumSet.noneOf(Priority.class);
  private Promise<Void> cancelled;
  private Future<Void> opening = Future.succeededFuture();
  private Future<Void> lastAck = Future.succeededFuture();
  private long lastDeliveryNanos = System.nanoTime() - QUIET_MS * 1_000_000;
  private final AtomicInteger redeliveriesLogged = new AtomicInteger();
  private final long createdNanos = System.nanoTime();
  private volatile boolean openedOnce;

  SlotConsumers(Vertx vertx, int slot, long epoch, String workerId, Topology topology, Prefetch prefetch, Supplier<Connection> broker,
      WorkerExecutor acks, WorkerExecutor opens, Metrics metrics, Consumer<Delivery> sink) {
    this.vertx = vertx;
    this.opens = opens;
    this.context = vertx.getOrCreateContext();
    this.slot = slot;
    this.epoch = epoch;
    this.workerId = workerId;
    this.topology = topology;
    this.prefetch = prefetch;
    this.broker = broker;
    this.acks = acks;
    this.metrics = metrics;
    this.sink = sink;
  }

  /**
   * Called on the context when the broker closes one of these channels or cancels one of these consumers while the
   * connection lives on (not for this class's own closes, nor for the whole connection going: {@link #lost} covers that).
   */
  SlotConsumers onBroken(Consumer<String> handler) {
    this.broken = handler;
    return this;
  }

  /** The worker has a usable connection. */
  boolean brokerReady() {
    Connection c = broker.get();
    return c != null && c.isOpen();
  }

  boolean consuming() {
    return !channels.isEmpty();
  }

  /**
   * Every lane has its consumer, on an open channel, with fewer deliveries unsettled than its prefetch: the broker then
   * holds nothing of this slot ready (it hands a consumer with room each message as it arrives). The heartbeat says so
   * and the leader's queue sampler skips such a slot's queues; a full lane, a missing consumer or an unlimited prefetch
   * (0) is not quiet.
   */
  boolean quiet() {
    for (Priority p : Priority.values()) {
      Channel ch = channels.get(p);
      ChannelTags tags = ch == null ? null : held.get(ch);
      if (tags == null || !ch.isOpen() || prefetch.of(p) <= 0 || tags.size() >= prefetch.of(p)) return false;
    }
    return true;
  }

  /** The open in flight, or the last one (completed). */
  Future<Void> lastOpen() {
    return opening;
  }

  /** Opens a channel and a consumer on each of the slot's queues; a half-open set is closed again. */
  Future<Void> open() {
    Connection conn = broker.get();
    if (conn == null || !conn.isOpen()) return Future.failedFuture(new IllegalStateException("no RabbitMQ connection"));
    if (!channels.isEmpty()) return Future.succeededFuture();
    opening = opens.executeBlocking(() -> {
      try {
        if (slot >= topology.totalSlots()) {
          // a reshard's new slot: its queues may not exist yet (every connect declares the configured slots.total only)
          Channel declaring = conn.createChannel();
          topology.declareSlot(declaring, slot);
          closeQuietly(declaring);
        }
        for (Priority p : Priority.values()) {
          Channel ch = conn.createChannel();
          channels.put(p, ch);
          ChannelTags tags = new ChannelTags();
          held.put(ch, tags);
          ch.basicQos(prefetch.of(p));
          DefaultConsumer consumer = consumer(ch, p, tags);
          ch.setDefaultConsumer(consumer);
          ch.basicConsume(topology.queue(slot, p), false, consumerTag(p), consumer);
        }
        if (!openedOnce) {
          openedOnce = true;
          metrics.moves().opened((System.nanoTime() - createdNanos) / 1_000_000);
        }
      } catch (Exception e) {
        List<Channel> half = new ArrayList<>(channels.values());
        channels.clear();
        half.forEach(this::closeQuietly);
        throw e;
      }
      return null;
    }, false);
    return opening;
  }

  private DefaultConsumer consumer(Channel ch, Priority p, ChannelTags tags) {
    return new DefaultConsumer(ch) {
      @Override
      public void handleDelivery(String tag, Envelope env, AMQP.BasicProperties props, byte[] body) {
        tags.delivered(env.getDeliveryTag());
        Delivery d = new Delivery(ch, env.getDeliveryTag(), body, p, env.getRoutingKey());
        if (env.isRedeliver()) {
          metrics.redelivered(slot);
          if (redeliveriesLogged.getAndIncrement() < 3) {
            log.atDebug().addKeyValue(SLOT, slot).log("slot {} (epoch {}): a redelivered message on the {} queue (an earlier consumer did not ack it)", slot, epoch, p.wire);
          }
        }
        context.runOnContext(v -> arrived(d));
      }

      @Override
      public void handleCancel(String tag) {
        // the broker cancelled the consumer (its queue deleted, say): nothing will arrive on this lane any more
        context.runOnContext(v -> brokenChannel(p, ch, "the broker cancelled consumer " + tag));
      }

      @Override
      public void handleShutdownSignal(String tag, ShutdownSignalException sig) {
        // our own close, or the whole connection (the worker's reconnect covers that): nothing to do here
        if (!ChannelClose.byBrokerAlone(sig)) return;
        context.runOnContext(v -> brokenChannel(p, ch, "the broker closed the " + p.wire + " channel (" + sig.getMessage() + ")"));
      }

      @Override
      public void handleCancelOk(String tag) {
        // dispatched after every delivery of this consumer: from here on the mailbox holds all of them
        context.runOnContext(v -> cancelOk(p));
      }
    };
  }

  private void arrived(Delivery d) {
    if (channels.get(d.priority()) != d.channel()) return; // its channel is closing: the broker requeues it
    lastDeliveryNanos = System.nanoTime();
    sink.accept(d);
  }

  private String consumerTag(Priority p) {
    return workerId + "-s" + slot + "-" + p.wire + "-e" + epoch;
  }

  /**
   * Cancels every consumer. Completes when the broker confirmed each cancel (or its channel is gone: its
   * deliveries are back in the queue already), or after {@link #CANCEL_TIMEOUT_MS}.
   */
  Future<Void> cancel() {
    Map<Priority, Channel> chs = new EnumMap<>(Priority.class);
    chs.putAll(channels);
    if (chs.isEmpty()) return Future.succeededFuture();
    Promise<Void> done = Promise.promise();
    cancelled = done;
    cancelPending.addAll(chs.keySet());
    long timer = vertx.setTimer(CANCEL_TIMEOUT_MS, t -> {
      if (done.tryComplete()) log.atWarn().addKeyValue(SLOT, slot).log("slot {}: no cancel-ok from the broker within {} ms; closing anyway", slot, CANCEL_TIMEOUT_MS);
    });
    vertx.executeBlocking(() -> {
      for (Map.Entry<Priority, Channel> e : chs.entrySet()) {
        try {
          e.getValue().basicCancel(consumerTag(e.getKey()));
        } catch (Exception ex) {
          context.runOnContext(v -> cancelOk(e.getKey()));
        }
      }
      return null;
    }, false);
    return done.future().onComplete(ar -> vertx.cancelTimer(timer));
  }

  private void brokenChannel(Priority p, Channel ch, String why) {
    if (channels.get(p) != ch || (cancelled != null && cancelPending.contains(p))) return; // already replaced, or being cancelled by us
    broken.accept(why);
  }

  private void cancelOk(Priority p) {
    if (cancelPending.remove(p) && cancelPending.isEmpty() && cancelled != null) cancelled.tryComplete();
  }

  /** How much longer the channels must stay quiet before they may close: 0 once nothing arrived for {@link #QUIET_MS}. */
  long quietRemainingMs() {
    long quietFor = (System.nanoTime() - lastDeliveryNanos) / 1_000_000;
    return Math.max(0, QUIET_MS - quietFor);
  }

  /**
   * Settles a finished batch ({@link AckPlan}: one multiple ack per channel where it can) after every settlement asked
   * for before has run. The order is this class's own: {@code executeBlocking(..., ordered=true)} orders per calling
   * context only, and with one ack thread a context whose run is already queued there takes a task handed to it later
   * ahead of another context's earlier one (a later batch's multiple ack then settled the earlier batch's deliveries
   * and the earlier settle found its tags gone: {@code SlotConsumersIT}). A channel that is gone makes its calls fail
   * quietly: the broker redelivers, and the write is idempotent.
   */
  Future<Void> settle(List<AckPlan.Settle<Channel>> settles) {
    List<AckPlan.Step<Channel>> steps = AckPlan.plan(settles);
    if (steps.isEmpty()) return Future.succeededFuture();
    lastAck = lastAck.transform(previous -> acks.executeBlocking(() -> {
      int calls = 0;
      int refused = 0;
      for (AckPlan.Step<Channel> step : steps) {
        ChannelTags tags = held.get(step.channel());
        List<ChannelTags.Send> sends = tags == null ? List.of(new ChannelTags.Send(step.tag(), step.multiple(), null))
            : step.requeue() ? List.of(tags.requeue(step.tag()))
            : step.multiple() ? tags.ackBatch(AckPlan.covered(settles, step)) : List.of(tags.ack(step.tag(), false));
        for (ChannelTags.Send send : sends) {
          if (send.refused() != null) {
            refused++;
            refused(step.channel(), send.refused());
          }
          if (send.tag() < 0) continue;
          try {
            if (step.requeue()) step.channel().basicNack(send.tag(), false, true);
            else step.channel().basicAck(send.tag(), send.multiple());
            calls++;
          } catch (Exception e) {
            // channel gone: the broker redelivers, and the write is idempotent
          }
        }
      }
      metrics.ackCalls(calls, refused);
      return null;
    }, false)); // the chain orders a slot's settles; ordered=true would also queue them behind the calling context's other blocking tasks
    return lastAck;
  }

  private void refused(Channel ch, String why) {
    log.atError().addKeyValue(SLOT, slot).log("slot {} (epoch {}): not sent on channel {}: {}", slot, epoch, ch.getChannelNumber(), why);
  }

  /** Completes once every ack asked for so far has run. */
  Future<Void> acked() {
    return lastAck.recover(e -> Future.succeededFuture());
  }

  /** Closes the channels (in the background); everything unacked on them returns to the queue. */
  void close() {
    List<Channel> chs = new ArrayList<>(channels.values());
    channels.clear();
    if (chs.isEmpty()) return;
    vertx.executeBlocking(() -> {
      chs.forEach(this::closeQuietly);
      return null;
    }, false);
  }

  /** The connection is gone: so are the channels and every unacked delivery (the broker requeues them). */
  void lost() {
    channels.clear();
    held.clear();
  }

  private void closeQuietly(Channel ch) {
    try {
      if (ch.isOpen()) ch.close();
    } catch (Exception ignored) {
      // already closed
    }
    held.remove(ch);
  }
}
