package dev.inspection.scheduler;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.Topology;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;

/** Per-slot backlog for the API and console: messages ready in each slot's two queues, sampled every few seconds. */
public final class QueueSampler {
  private final Topology topology;
  private final Supplier<Connection> connection;
  private final WorkerExecutor thread;
  private final Map<Integer, Long> depth = new ConcurrentHashMap<>();
  private volatile long sampledAt;

  public QueueSampler(Vertx vertx, Topology topology, Supplier<Connection> connection, long everyMs) {
    this.topology = topology;
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
      try {
        for (int s = 0; s < topology.totalSlots(); s++) {
          long n = 0;
          for (Priority p : Priority.values()) n += ch.queueDeclarePassive(topology.queue(s, p)).getMessageCount();
          depth.put(s, n);
        }
        sampledAt = System.currentTimeMillis();
      } finally {
        if (ch.isOpen()) ch.close();
      }
      return null;
    }, false);
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
