package dev.inspection.scheduler;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.SlotGauges;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Per-slot backlog for the API, the console and {@code /metrics} ({@code queue_backlog_messages{slot, priority}}):
 * messages ready in each slot's queues, sampled every few seconds.
 */
public final class QueueSampler {
  private static final Logger log = LoggerFactory.getLogger(QueueSampler.class);
  private final Topology topology;
  private final Supplier<Connection> connection;
  private final WorkerExecutor thread;
  private final SlotGauges gauges;
  private final Map<Integer, Long> depth = new ConcurrentHashMap<>();
  private volatile long sampledAt;
  private volatile long lastWarnAt;

  /** The slots to sample: the lease rows' count (0 before the first read: slots.total), which a reshard changes before {@code slots.total} is. */
  private final IntSupplier slots;

  public QueueSampler(Vertx vertx, Topology topology, IntSupplier slots, Supplier<Connection> connection, long everyMs, SlotGauges gauges) {
    this.topology = topology;
    this.slots = slots;
    this.gauges = gauges;
    this.connection = connection;
    this.thread = vertx.createSharedWorkerExecutor("queue-sampler-" + System.identityHashCode(this), 1);
    vertx.setPeriodic(1000, everyMs, t -> sample());
  }

  private void sample() {
    try {
      sampleOnce();
    } catch (RejectedExecutionException closing) {
      // the node is stopping: its executor is closed before this periodic timer goes
    }
  }

  private void sampleOnce() {
    thread.executeBlocking(() -> {
      Connection c = connection.get();
      if (c == null || !c.isOpen()) return null;
      Channel ch = c.createChannel();
      Map<Integer, Map<String, Long>> sample = new HashMap<>();
      try {
        int count = slots.getAsInt();
        for (int s = 0; s < (count > 0 ? count : topology.totalSlots()); s++) {
          long n = 0;
          Map<String, Long> perPriority = new HashMap<>();
          for (Priority p : Priority.values()) {
            try {
              long ready = ch.queueDeclarePassive(topology.queue(s, p)).getMessageCount();
              n += ready;
              perPriority.merge(p.wire, ready, Long::sum);
            } catch (IOException e) {
              // a queue that is missing (not declared yet, or deleted) counts 0; the broker closed the channel, so
              // open another and go on: one missing queue must not leave every slot without a sample
              missing(topology.queue(s, p), e);
              if (!ch.isOpen()) ch = c.createChannel();
            }
          }
          depth.put(s, n);
          sample.put(s, perPriority);
        }
        sampledAt = System.currentTimeMillis();
        gauges.backlog(sample);
        try {
          gauges.deadLetters(ch.queueDeclarePassive(topology.deadLetterQueue()).getMessageCount());
        } catch (IOException e) {
          missing(topology.deadLetterQueue(), e);
          ch = c.createChannel();
        }
      } finally {
        if (ch != null && ch.isOpen()) ch.close();
      }
      return null;
    }, false).onFailure(e -> {
      long now = System.currentTimeMillis();
      if (now - lastWarnAt > 60_000) {
        lastWarnAt = now;
        log.warn("queue sample failed (backlog figures and the fleet mode's backlog signal wait for the next one): {}", e.getMessage());
      }
    });
  }

  private void missing(String queue, IOException e) {
    long now = System.currentTimeMillis();
    if (now - lastWarnAt > 60_000) {
      lastWarnAt = now;
      log.warn("queue sample: {} cannot be read ({}); counted as 0", queue, e.getCause() == null ? e.getMessage() : e.getCause().getMessage());
    }
  }

  /** Messages waiting in a slot's queues at the last sample; -1 before the first. */
  public long depth(int slot) {
    return depth.getOrDefault(slot, -1L);
  }

  public long total() {
    return depth.values().stream().mapToLong(Long::longValue).sum();
  }

  public long sampledAt() {
    return sampledAt;
  }

  public void close() {
    thread.close();
  }
}
