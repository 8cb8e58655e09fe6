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
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Per-slot backlog for the API, the console and {@code /metrics} ({@code queue_backlog_messages{slot, priority}}):
 * messages ready in each slot's queues, sampled every few seconds. A slot whose owner reported it quiet (every lane
 * consuming with room under its prefetch, so nothing waits ready) counts 0 without asking the broker, except at a
 * full sample every {@code fullEveryMs}: at idle that spares the broker three passive declares per slot per sample.
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
  private final Supplier<Set<Integer>> quiet;
  private final long fullEveryMs;
  private long lastFullAt = Long.MIN_VALUE / 2;
  private volatile int skipped;
  /** Queues found missing by the sample before and by this one (the sampler's own thread only). */
  private Set<String> missingBefore = new HashSet<>();
  private Set<String> missingNow = new HashSet<>();

  /** The slots to sample: the lease rows' count (0 before the first read: slots.total), which a reshard changes before {@code slots.total} is. */
  private final IntSupplier slots;

  /**
   * @param quiet the slots that need no sample now ({@link ControlLoop#quietSlots}); read at every sample
   * @param fullEveryMs every slot is sampled at least this often, quiet or not
   */
  public QueueSampler(Vertx vertx, Topology topology, IntSupplier slots, Supplier<Connection> connection, long everyMs, SlotGauges gauges,
      Supplier<Set<Integer>> quiet, long fullEveryMs) {
    this.topology = topology;
    this.quiet = quiet;
    this.fullEveryMs = fullEveryMs;
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
      missingBefore = missingNow;
      missingNow = new HashSet<>();
      Map<Integer, Map<String, Long>> sample = new HashMap<>();
      long startedAt = System.currentTimeMillis();
      boolean full = startedAt - lastFullAt >= fullEveryMs;
      Set<Integer> skip = full ? Set.of() : quiet.get();
      int skippedNow = 0;
      try {
        int count = slots.getAsInt();
        for (int s = 0; s < (count > 0 ? count : topology.totalSlots()); s++) {
          long n = 0;
          Map<String, Long> perPriority = new HashMap<>();
          boolean asked = !skip.contains(s);
          if (!asked) skippedNow++;
          for (Priority p : Priority.values()) {
            if (!asked) {
              perPriority.put(p.wire, 0L);
              continue;
            }
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
        if (full) lastFullAt = startedAt;
        skipped = skippedNow;
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

  /**
   * A queue the broker does not know. Logged when it was missing at the sample before too: at start-up the first sample
   * often runs before the workers have declared the queues, which is no news to the operator.
   */
  private void missing(String queue, IOException e) {
    missingNow.add(queue);
    long now = System.currentTimeMillis();
    if (missingBefore.contains(queue) && now - lastWarnAt > 60_000) {
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

  /** Slots the last sample counted as 0 without asking the broker (their owners reported them quiet). */
  public int skipped() {
    return skipped;
  }

  public void close() {
    thread.close();
  }
}
