package dev.inspection.worker;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import dev.inspection.messaging.InvalidMessage;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import dev.inspection.worker.BatchStore.Committed;
import dev.inspection.worker.BatchStore.Fenced;
import dev.inspection.worker.DeadLetterPublisher.DeadLetter;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes one slot that this worker holds at a given lease epoch: a channel and a consumer per priority
 * queue, a mailbox, one batch at a time (at most {@code batchMax} messages or {@code lingerMs}), commit,
 * then ack (INV-19). High-priority messages fill three quarters of a batch unless the oldest normal one
 * waited over a minute (seed 000 §7.4).
 *
 * <p>Lease lost ({@link Fenced}): nothing was written; the channels are closed, which returns every
 * unacked delivery to the queue for the new owner; the batch is never retried here. Database error:
 * the same, then wait on the {@link DbGate} and consume again.
 */
public final class SlotProcessor {
  private static final Logger log = LoggerFactory.getLogger(SlotProcessor.class);
  private static final long STARVATION_MS = 60_000;

  /** What the processor tells its owner. */
  public interface Listener {
    void fenced(int slot, long epoch, Fenced f);
  }

  record Delivery(Channel channel, long tag, byte[] body, long receivedAtMs, Priority priority, String routingKey) {}

  /** Tunables of a processor. */
  public record Settings(int prefetchHigh, int prefetchNormal, int batchMax, long lingerMs, int maxMessageBytes) {}

  private final Vertx vertx;
  private final Context context;
  private final int slot;
  private final long epoch;
  private final String workerId;
  private final Topology topology;
  private final CommitGroup store;
  private final DeadLetterPublisher deadLetters;
  private final DbGate gate;
  private final Metrics metrics;
  private final Clock clock;
  private final Settings settings;
  private final Listener listener;

  private final Map<Priority, Channel> channels = new java.util.concurrent.ConcurrentHashMap<>();
  private final ArrayDeque<Delivery> high = new ArrayDeque<>();
  private final ArrayDeque<Delivery> normal = new ArrayDeque<>();
  private boolean draining;
  private volatile boolean stopped;
  /** Graceful close in progress: deliveries still arriving before the broker's cancel-ok are kept and committed. */
  private volatile boolean closing;
  private final Map<Priority, Promise<Void>> cancelled = new java.util.concurrent.ConcurrentHashMap<>();
  private Future<Void> lastAck = Future.succeededFuture();
  private long committedTotal;
  private volatile long lastLagMs;
  private final java.util.concurrent.atomic.AtomicInteger redeliveriesLogged = new java.util.concurrent.atomic.AtomicInteger();
  private long batchNanosTotal;
  private long batches;
  private final SnapshotLoader.Snapshot snapshot;
  private final DeviceDirectory directory;
  private final java.util.function.IntFunction<dev.inspection.state.AlertRules> rules;
  /** The derived state of every device of the slot (D7): loaded at takeover, replaced after each commit. */
  private final java.util.Map<String, dev.inspection.state.DerivedState> derived = new java.util.HashMap<>();
  private volatile boolean paused;
  private boolean opening;
  private long lingerTimer = -1;
  private Promise<Void> idle;

  public SlotProcessor(Vertx vertx, int slot, long epoch, String workerId, Topology topology, CommitGroup store,
      DeadLetterPublisher deadLetters, DbGate gate, Metrics metrics, Clock clock, Settings settings, Listener listener,
      SnapshotLoader.Snapshot snapshot, DeviceDirectory directory, java.util.function.IntFunction<dev.inspection.state.AlertRules> rules) {
    this.snapshot = snapshot;
    this.directory = directory;
    this.rules = rules;
    if (snapshot != null) {
      for (java.util.Map.Entry<String, SnapshotLoader.DeviceMemory> e : snapshot.devices().entrySet()) {
        if (e.getValue().derived() == null) continue;
        try {
          derived.put(e.getKey(), dev.inspection.state.DerivedState.fromJson(e.getValue().derived()));
        } catch (RuntimeException bad) {
          log.warn("slot {}: device {} has an unreadable derived snapshot ({}); its counters start again", slot, e.getKey(), bad.getMessage());
        }
      }
    }
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
    this.slot = slot;
    this.epoch = epoch;
    this.workerId = workerId;
    this.topology = topology;
    this.store = store;
    this.deadLetters = deadLetters;
    this.gate = gate;
    this.metrics = metrics;
    this.clock = clock;
    this.settings = settings;
    this.listener = listener;
  }

  public int slot() {
    return slot;
  }

  public long epoch() {
    return epoch;
  }

  /** The derived state loaded when this worker took the slot over (INV-10). */
  public SnapshotLoader.Snapshot snapshot() {
    return snapshot;
  }

  /** Messages committed and acked on this slot since it was taken over. */
  public long committedTotal() {
    return committedTotal;
  }

  /** Probe-to-commit lag of the newest batch's oldest result. */
  public long lastLagMs() {
    return lastLagMs;
  }

  /** Average batch transaction time in ms, for the slot weight. */
  public double averageBatchMs() {
    return batches == 0 ? 0 : batchNanosTotal / 1e6 / batches;
  }

  /** A device's derived state as this owner holds it (for tests and the API). */
  public dev.inspection.state.DerivedState derived(String deviceId) {
    return derived.get(deviceId);
  }

  public int mailboxSize() {
    return high.size() + normal.size();
  }

  public boolean consuming() {
    return !channels.isEmpty();
  }

  /**
   * Opens a channel and a consumer on each of the slot's queues. A channel is registered before its
   * consumer starts: a queue with a backlog delivers at once, and a delivery on an unknown channel would
   * sit unacked (and invisible) until the channel closed.
   */
  public Future<Void> open(Connection conn) {
    if (stopped || closing || opening || !channels.isEmpty() || conn == null || !conn.isOpen()) return Future.succeededFuture();
    opening = true;
    Promise<Void> opened = Promise.promise();
    openDone = opened.future();
    vertx.executeBlocking(() -> {
      try {
        for (Priority p : Priority.values()) {
          Channel ch = conn.createChannel();
          channels.put(p, ch);
          ch.basicQos(p == Priority.HIGH ? settings.prefetchHigh() : settings.prefetchNormal());
          DefaultConsumer consumer = new DefaultConsumer(ch) {
            @Override
            public void handleDelivery(String tag, Envelope env, AMQP.BasicProperties props, byte[] body) {
              Delivery d = new Delivery(ch, env.getDeliveryTag(), body, clock.millis(), p, env.getRoutingKey());
              if (env.isRedeliver()) {
                metrics.redelivered(slot);
                if (redeliveriesLogged.getAndIncrement() < 3) {
                  log.debug("slot {} (epoch {}): a redelivered message on the {} queue (an earlier consumer did not ack it)", slot, epoch, p.wire);
                }
              }
              context.runOnContext(v -> onDelivery(d));
            }

            @Override
            public void handleCancelOk(String tag) {
              // dispatched after every delivery of this consumer: from here on the mailbox holds all of them
              Promise<Void> pr = cancelled.get(p);
              if (pr != null) context.runOnContext(v -> pr.tryComplete());
            }
          };
          // a delivery the broker sends after the cancel (a quorum-queue race) reaches no consumer; caught
          // here it joins the mailbox and is committed with the rest instead of being redelivered
          ch.setDefaultConsumer(consumer);
          ch.basicConsume(topology.queue(slot, p), false, consumerTag(p), consumer);
        }
      } catch (Exception e) {
        List<Channel> half = new ArrayList<>(channels.values());
        channels.clear();
        half.forEach(SlotProcessor::closeQuietly);
        throw e;
      }
      return null;
    }, false).onComplete(ar -> {
      opening = false;
      if (stopped || paused) closeChannels();
      // a close() that came while the channels were being opened waited for this: it cancels them now
      if (ar.failed()) opened.fail(ar.cause());
      else opened.complete();
    });
    return opened.future();
  }

  /** Completes when no open() is in flight. */
  private Future<Void> openDone = Future.succeededFuture();

  private String consumerTag(Priority p) {
    return workerId + "-s" + slot + "-" + p.wire + "-e" + epoch;
  }

  /** The connection is gone: so are the channels and every unacked delivery (the broker requeues them). */
  public void connectionLost() {
    channels.clear();
    high.clear();
    normal.clear();
  }

  private void onDelivery(Delivery d) {
    if (stopped || paused || channels.get(d.priority()) != d.channel()) return; // its channel is closing: the broker requeues it
    lastDeliveryNanos = System.nanoTime();
    (d.priority() == Priority.HIGH ? high : normal).add(d);
    metrics.consumed(slot, 1);
    maybeDrain();
  }

  private void maybeDrain() {
    if (draining || paused) return;
    if (mailboxSize() >= settings.batchMax() || ((stopped || closing) && mailboxSize() > 0)) {
      drain();
    } else if (mailboxSize() > 0 && lingerTimer < 0) {
      lingerTimer = vertx.setTimer(settings.lingerMs(), t -> {
        lingerTimer = -1;
        if (!draining && mailboxSize() > 0) drain();
      });
    } else if (mailboxSize() == 0 && idle != null) {
      if (closing) closeWhenIdle();
      else idle.tryComplete();
    }
  }

  List<Delivery> takeBatch() {
    int max = settings.batchMax();
    List<Delivery> batch = new ArrayList<>(max);
    boolean starving = !normal.isEmpty() && clock.millis() - normal.peek().receivedAtMs() > STARVATION_MS;
    if (starving) {
      while (batch.size() < max && !normal.isEmpty()) batch.add(normal.poll());
    }
    int highShare = max * 3 / 4;
    while (batch.size() < highShare && !high.isEmpty()) batch.add(high.poll());
    while (batch.size() < max && !normal.isEmpty()) batch.add(normal.poll());
    while (batch.size() < max && !high.isEmpty()) batch.add(high.poll());
    return batch;
  }

  private void drain() {
    if (lingerTimer >= 0) {
      vertx.cancelTimer(lingerTimer);
      lingerTimer = -1;
    }
    List<Delivery> batch = takeBatch();
    if (batch.isEmpty()) {
      maybeDrain();
      return;
    }
    draining = true;
    List<dev.inspection.messaging.Envelope> valid = new ArrayList<>(batch.size());
    List<Delivery> validDeliveries = new ArrayList<>(batch.size());
    List<DeadLetter> invalid = new ArrayList<>();
    List<Delivery> invalidDeliveries = new ArrayList<>();
    for (Delivery d : batch) {
      try {
        dev.inspection.messaging.Envelope e = dev.inspection.messaging.Envelope.parse(d.body(), settings.maxMessageBytes());
        if (e.slotId() != slot) {
          throw new InvalidMessage("wrong_slot", "envelope.slot_id " + e.slotId() + " arrived on slot " + slot
              + "'s queue: probe and worker disagree on slots.total or the routing key");
        }
        valid.add(e);
        validDeliveries.add(d);
      } catch (InvalidMessage im) {
        invalid.add(new DeadLetter(d.body(), im.reason, im.getMessage(), d.routingKey(), topology.queue(slot, d.priority())));
        invalidDeliveries.add(d);
      }
    }
    java.util.Map<String, Priority> queueOf = new java.util.HashMap<>();
    for (int i = 0; i < valid.size(); i++) queueOf.put(valid.get(i).deviceId(), validDeliveries.get(i).priority());
    long start = System.nanoTime();
    // the device's profile decides how its payload is normalised and merged; a payload its profile
    // cannot read is dead-lettered like any other bad input
    Future<StatePlanner.Plan> planned = valid.isEmpty() ? Future.succeededFuture(null) : directory.lookup(queueOf.keySet(), queueOf).map(infos -> {
      List<dev.inspection.messaging.Envelope> ready = new ArrayList<>(valid.size());
      List<Delivery> readyDeliveries = new ArrayList<>(valid.size());
      for (int i = 0; i < valid.size(); i++) {
        dev.inspection.messaging.Envelope e = valid.get(i);
        Delivery d = validDeliveries.get(i);
        try {
          ready.add(normalize(e, infos.get(e.deviceId())));
          readyDeliveries.add(d);
        } catch (IllegalArgumentException bad) {
          invalid.add(new DeadLetter(d.body(), "bad_payload", "payload does not fit the device's profile '"
              + infos.get(e.deviceId()).profile().name() + "': " + bad.getMessage(), d.routingKey(), topology.queue(slot, d.priority())));
          invalidDeliveries.add(d);
        }
      }
      StatePlanner.Plan plan = ready.isEmpty() ? null : StatePlanner.plan(ready, derived, infos, rules);
      valid.clear();
      validDeliveries.clear();
      for (int i = 0; i < ready.size(); i++) {
        String why = plan.rejected().get(ready.get(i).deviceId());
        Delivery d = readyDeliveries.get(i);
        if (why == null) {
          valid.add(ready.get(i));
          validDeliveries.add(d);
        } else {
          invalid.add(new DeadLetter(d.body(), "unprocessable", why, d.routingKey(), topology.queue(slot, d.priority())));
          invalidDeliveries.add(d);
        }
      }
      return plan == null || plan.isEmpty() ? null : plan;
    });
    Future<Void> dead = planned.transform(ar -> invalid.isEmpty() ? Future.succeededFuture() : deadLetters.publish(invalid)
        .compose(v -> {
          invalid.forEach(dl -> {
            metrics.deadLettered(dl.reason());
            log.warn("slot {}: dead-lettered a message ({}): {}", slot, dl.reason(), dl.detail());
          });
          return ack(invalidDeliveries);
        }));
    Future<BatchStore.Outcome> commit = planned.compose(plan -> plan == null ? Future.succeededFuture(new Committed(0, 0))
        : store.submit(slot, epoch, plan).map(out -> {
          // INV-8: memory follows the database, never the other way round
          if (out instanceof Committed) derived.putAll(plan.next());
          return out;
        }));
    Future.join(dead, commit).onComplete(ar -> {
      draining = false;
      if (dead.failed()) {
        log.warn("slot {}: cannot dead-letter {} message(s) ({}); they will be delivered again", slot, invalid.size(), dead.cause().getMessage());
      }
      if (commit.failed()) {
        metrics.dbErrors();
        pauseForDatabase(commit.cause());
        return;
      }
      BatchStore.Outcome out = commit.result();
      if (out instanceof Fenced f) {
        metrics.fenced(slot, valid.size());
        log.warn("slot {}: lease moved (now owner={} epoch={}, mine epoch={}); batch of {} rolled back, consumers cancelled",
            slot, f.owner(), f.epoch(), epoch, valid.size());
        abort();
        listener.fenced(slot, epoch, f);
        return;
      }
      if (!valid.isEmpty()) {
        long now = clock.millis();
        long nanos = System.nanoTime() - start;
        metrics.batch(valid.size(), nanos);
        committedTotal += valid.size();
        batchNanosTotal += nanos;
        batches++;
        long maxLag = 0;
        for (dev.inspection.messaging.Envelope e : valid) {
          metrics.lagMillis(now - e.collectedAt().toEpochMilli());
          maxLag = Math.max(maxLag, now - e.collectedAt().toEpochMilli());
        }
        lastLagMs = maxLag;
        Future<Void> acked = ack(validDeliveries).onSuccess(v -> metrics.committed(slot, valid.size()));
        lastAck = Future.join(lastAck, acked).<Void>mapEmpty();
      }
      maybeDrain();
    });
  }

  private Future<Void> ack(List<Delivery> deliveries) {
    return vertx.executeBlocking(() -> {
      for (Delivery d : deliveries) {
        try {
          d.channel().basicAck(d.tag(), false);
        } catch (Exception e) {
          // channel gone: the broker redelivers, and the write is idempotent
        }
      }
      return null;
    }, false).mapEmpty();
  }

  private void pauseForDatabase(Throwable cause) {
    log.warn("slot {}: batch failed on a database error ({}); requeued, waiting for PostgreSQL", slot, cause.getMessage());
    paused = true;
    closeChannels();
    if ((stopped || closing) && idle != null) idle.tryComplete();
    gate.failed(cause).onSuccess(v -> {
      paused = false;
      if (!stopped) reopen.run();
    });
  }

  private Runnable reopen = () -> { };

  /** How to consume again after a pause (set by the owner, who holds the connection). */
  public void onResume(Runnable r) {
    this.reopen = r;
  }

  private static dev.inspection.messaging.Envelope normalize(dev.inspection.messaging.Envelope e, DeviceDirectory.Info info) {
    JsonObject payload = info.profile().normalize(e.payload());
    if (payload == e.payload()) return e;
    return new dev.inspection.messaging.Envelope(e.messageId(), e.deviceId(), e.slotId(), e.slotMapVersion(), e.resourceVersion(), e.planVersion(),
        e.isNode(), e.cycleId(), e.seq(), e.collectedAt(), e.priority(), payload);
  }

  /** Lease lost: stop at once; everything unacked goes back to the queue. */
  public void abort() {
    stopped = true;
    closeChannels();
    if (idle != null) idle.tryComplete();
  }

  /**
   * Graceful stop (D6, and the old owner's half of a move): cancel the consumers, keep what the broker
   * sent before its cancel-ok, commit and ack all of it, then close the channels. Nothing is left unacked,
   * so a move causes no redelivery.
   */
  public Future<Void> close() {
    if (stopped || closing) return idle == null ? Future.succeededFuture() : idle.future();
    closing = true;
    idle = Promise.promise();
    // a move can arrive while this slot's channels are still being opened: cancel them once they exist
    openDone.onComplete(v -> cancelThenDrain());
    return idle.future().eventually(() -> lastAck.recover(e -> Future.succeededFuture())).eventually(() -> {
      stopped = true;
      closeChannels();
      return Future.<Void>succeededFuture();
    }).mapEmpty();
  }

  private void cancelThenDrain() {
    List<Future<Void>> cancels = new ArrayList<>();
    Map<Priority, Channel> chs = new java.util.HashMap<>(channels);
    for (Priority p : chs.keySet()) {
      Promise<Void> pr = Promise.promise();
      cancelled.put(p, pr);
      cancels.add(pr.future());
    }
    vertx.executeBlocking(() -> {
      for (Map.Entry<Priority, Channel> e : chs.entrySet()) {
        try {
          e.getValue().basicCancel(consumerTag(e.getKey()));
        } catch (Exception ex) {
          cancelled.get(e.getKey()).tryComplete(); // channel gone: its deliveries are back in the queue already
        }
      }
      return null;
    }, false);
    Future.join(cancels).timeout(5, java.util.concurrent.TimeUnit.SECONDS).onComplete(ar -> {
      // every delivery is in the mailbox now: commit it all
      closeWhenIdle();
      maybeDrain();
    });
  }

  private boolean cancelDone() {
    for (Promise<Void> p : cancelled.values()) if (!p.future().isComplete()) return false;
    return true;
  }

  /**
   * A quorum queue can still hand the channel deliveries it sent before it processed the cancel, even
   * after cancel-ok: the channels stay open until none has arrived for {@link #QUIET_MS}, and whatever
   * arrives meanwhile is committed and acked like the rest — so a move redelivers nothing.
   */
  private void closeWhenIdle() {
    if (idle == null || !closing || !cancelDone() || draining || mailboxSize() > 0 || idle.future().isComplete()) return;
    long quietFor = (System.nanoTime() - lastDeliveryNanos) / 1_000_000;
    if (quietFor >= QUIET_MS) {
      idle.tryComplete();
    } else if (quietTimer < 0) {
      quietTimer = vertx.setTimer(QUIET_MS - quietFor, t -> {
        quietTimer = -1;
        maybeDrain();
        closeWhenIdle();
      });
    }
  }

  static final long QUIET_MS = 150;
  private long quietTimer = -1;
  private volatile long lastDeliveryNanos = System.nanoTime() - QUIET_MS * 1_000_000;

  private List<String> consumerTags(Channel ch) {
    List<String> out = new ArrayList<>();
    for (Priority p : Priority.values()) {
      if (channels.get(p) == ch) out.add(consumerTag(p));
    }
    return out;
  }

  private void closeChannels() {
    List<Channel> chs = new ArrayList<>(channels.values());
    channels.clear();
    high.clear();
    normal.clear();
    closeAsync(chs);
  }

  private void closeAsync(List<Channel> chs) {
    if (chs.isEmpty()) return;
    vertx.executeBlocking(() -> {
      chs.forEach(SlotProcessor::closeQuietly);
      return null;
    }, false);
  }

  private static void closeQuietly(Channel ch) {
    try {
      if (ch.isOpen()) ch.close();
    } catch (Exception ignored) {
      // already closed
    }
  }
}
