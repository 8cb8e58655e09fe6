package dev.inspection.scheduler;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import dev.inspection.messaging.DeadLetterHeaders;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.SlotMapWindow;
import dev.inspection.messaging.Topology;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's last step of a shrink (seed 000 §3.4, issue 14 item 3): once the grace window of a version with fewer
 * slots has closed, the slots only older versions had are retired, so nothing of them is left but history.
 * <ol>
 *   <li>Database, one term-fenced transaction: the retired slots' lease rows are locked in slot order (an in-flight
 *       batch of theirs commits first), checked to hold no device any more (the switch moved them all; a device
 *       left there is moved now, by {@link SlotSwitch#sweep}, and the step runs again), then deleted with a
 *       {@code retired} history row each. Their owners see the lease gone at their next lease poll and close the
 *       slots; a batch planned before is fenced (no lease row, no write).</li>
 *   <li>Broker, off the event loop: each retired queue is unbound first (a probe that still routes there gets its
 *       result back as unroutable and keeps it in its outbox, nothing is lost); while a queue still has a consumer
 *       (its owner has not closed it yet) the step waits for the next tick; then every message left in it (results
 *       of the old version, stale since the window closed) goes to the dead-letter exchange as
 *       {@value SlotMapWindow#STALE_REASON}, confirmed before it is acked; then the queue is deleted. Quorum queues
 *       refuse {@code queue.delete if-empty} (RabbitMQ 3.10 closes the connection), hence the drain first.</li>
 *   <li>The version's {@code retired_at} is set.</li>
 * </ol>
 * Each step can be cut short and run again (the next tick, or the next leader): deleted rows stay deleted, a missing
 * queue counts as done.
 */
public final class SlotRetire {
  private static final Logger log = LoggerFactory.getLogger(SlotRetire.class);

  /**
   * Versions with fewer slots than the version before, switched, whose window closed and whose slots are not retired
   * yet: the version, its count and the previous count (the retired slots are between the two).
   */
  static final String DUE = """
      SELECT v.version, v.total_slots, p.total_slots FROM slot_map_version v
      JOIN LATERAL (SELECT total_slots FROM slot_map_version e WHERE e.version < v.version ORDER BY e.version DESC LIMIT 1) p ON true
      WHERE v.switched_at IS NOT NULL AND v.retired_at IS NULL AND v.window_until <= now() AND p.total_slots > v.total_slots ORDER BY v.version""";
  static final String LOCK = "SELECT slot_id FROM slot_lease WHERE slot_id >= $1 ORDER BY slot_id FOR UPDATE";
  static final String STRANDED = "SELECT DISTINCT current_slot FROM device_status_current WHERE current_slot >= $1";
  static final String DELETE = """
      WITH gone AS (DELETE FROM slot_lease WHERE slot_id >= $1 RETURNING slot_id, owner_worker_id, lease_epoch, state)
      INSERT INTO slot_lease_history (slot_id, old_owner, new_owner, old_epoch, new_epoch, reason, old_state, new_state)
      SELECT slot_id, owner_worker_id, NULL, lease_epoch, lease_epoch, 'retired', state, 'FREE' FROM gone""";
  static final String MARK = "UPDATE slot_map_version SET retired_at = now() WHERE version = $1 AND retired_at IS NULL";

  /** What the broker step found: queues still consumed (wait), messages dead-lettered, queues deleted. */
  record Drained(int consumed, int deadLettered, int deleted) {}

  /** Thrown in the database step when devices are still at a retired slot: they are moved, and the step runs again. */
  static final class Stranded extends RuntimeException {
    final List<Integer> slots;

    Stranded(List<Integer> slots) {
      super("devices are still at retired slot(s) " + slots + "; moved now, the retirement runs again at the next tick");
      this.slots = slots;
    }
  }

  private final Vertx vertx;
  private final Function<Function<SqlConnection, Future<Integer>>, Future<Integer>> tx;
  private final SlotSwitch sweeper;
  private final Topology topology;
  private final Supplier<Connection> broker;
  private final String by;
  /** Queues found consumed by the last run: the wait is logged when it changes, not every tick. */
  private int waiting;
  /** Queues deleted and messages dead-lettered by this leader's runs of the retirement in progress, for its last log line. */
  private int deletedSoFar;
  private int deadSoFar;

  /**
   * @param tx the leader's term-fenced transaction runner
   * @param broker the node's broker connection, null while there is none
   * @param by who dead-letters the leftovers ({@code x-dead-by})
   */
  public SlotRetire(Vertx vertx, Function<Function<SqlConnection, Future<Integer>>, Future<Integer>> tx, Topology topology,
      Supplier<Connection> broker, String by) {
    this.vertx = vertx;
    this.tx = tx;
    this.sweeper = new SlotSwitch(tx);
    this.topology = topology;
    this.broker = broker;
    this.by = by;
  }

  /** Retires slots {@code totalSlots} .. {@code mostSlots - 1} of version {@code version}; true when done, false when a queue is still consumed. */
  public Future<Boolean> run(long version, int totalSlots, int mostSlots) {
    long t0 = System.nanoTime();
    return leases(totalSlots).recover(e -> {
      if (!(e instanceof Stranded s)) return Future.failedFuture(e);
      log.warn("slot map version {}: {}", version, s.getMessage());
      return sweeper.sweep(version, s.slots, mostSlots, totalSlots).compose(n -> Future.failedFuture(e));
    }).compose(deleted -> {
      if (deleted > 0) log.info("slot map version {}: {} lease row(s) of retired slots {} .. {} deleted", version, deleted, totalSlots, mostSlots - 1);
      return vertx.executeBlocking(() -> drain(totalSlots, mostSlots, version), false);
    }).compose(d -> {
      deletedSoFar += d.deleted();
      deadSoFar += d.deadLettered();
      if (d.consumed() > 0) {
        if (d.consumed() != waiting) log.info("slot map version {}: {} retired queue(s) still have a consumer (their owner closes them at its next lease poll); waiting",
            version, d.consumed());
        waiting = d.consumed();
        return Future.succeededFuture(false);
      }
      waiting = 0;
      return tx.apply(c -> c.preparedQuery(MARK).execute(Tuple.of(version)).map(r -> r.rowCount())).map(x -> {
        log.info("slot map version {}: slots {} .. {} retired (last run {} ms): {} queue(s) deleted, {} message(s) left in them dead-lettered as {}",
            version, totalSlots, mostSlots - 1, (System.nanoTime() - t0) / 1_000_000, deletedSoFar, deadSoFar, SlotMapWindow.STALE_REASON);
        deletedSoFar = 0;
        deadSoFar = 0;
        return true;
      });
    });
  }

  private Future<Integer> leases(int totalSlots) {
    return tx.apply(c -> c.preparedQuery(LOCK).execute(Tuple.of(totalSlots))
        .compose(locked -> c.preparedQuery(STRANDED).execute(Tuple.of(totalSlots)))
        .compose(stranded -> {
          List<Integer> slots = new ArrayList<>();
          for (Row r : stranded) slots.add((int) r.getShort(0));
          if (!slots.isEmpty()) return Future.failedFuture(new Stranded(slots));
          return c.preparedQuery(DELETE).execute(Tuple.of(totalSlots)).map(r -> r.rowCount());
        }));
  }

  /**
   * Moves every message of {@code q} to the dead-letter exchange as stale, each confirmed before it is acked; blocking.
   * Through a consumer of its own: RabbitMQ refuses {@code basic.get} on a quorum queue with single-active-consumer.
   * Done when nothing arrived for a while and the queue has nothing ready.
   */
  private int deadLetter(Channel ch, String q, int slot, long version) throws IOException, InterruptedException, TimeoutException {
    BlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
    ch.basicQos(100);
    String tag = ch.basicConsume(q, false, (consumerTag, d) -> got.add(d), consumerTag -> { });
    int n = 0;
    try {
      while (true) {
        Delivery d = got.poll(500, TimeUnit.MILLISECONDS);
        if (d == null) {
          if (ch.queueDeclarePassive(q).getMessageCount() == 0) return n;
          continue;
        }
        ch.basicPublish(topology.deadLetterExchange(), SlotMapWindow.STALE_REASON, DeadLetterHeaders.of(SlotMapWindow.STALE_REASON,
            "left in the queue of slot " + slot + ", retired by slot map version " + version + " after its grace window closed",
            d.getEnvelope().getRoutingKey(), q, by, System.currentTimeMillis()), d.getBody());
        ch.waitForConfirmsOrDie(30_000);
        ch.basicAck(d.getEnvelope().getDeliveryTag(), false);
        n++;
      }
    } finally {
      ch.basicCancel(tag);
    }
  }

  /** Whether the broker said the queue does not exist (404 NOT_FOUND). */
  private static boolean gone(IOException e) {
    return String.valueOf(e.getCause() == null ? e.getMessage() : e.getCause().getMessage()).contains("NOT_FOUND");
  }

  /** The broker's own words (an {@link IOException} of the Java client carries them only in its cause). */
  private static IOException failed(String queue, IOException e) {
    return new IOException("retiring queue " + queue + ": " + (e.getCause() == null ? e.getMessage() : e.getCause().getMessage()), e);
  }

  /** The broker step; blocking. */
  private Drained drain(int totalSlots, int mostSlots, long version) throws IOException, InterruptedException, TimeoutException {
    Connection c = broker.get();
    if (c == null || !c.isOpen()) throw new IOException("no broker connection: the retired slots' queues are drained at a later tick");
    Channel ch = c.createChannel();
    int consumed = 0;
    int dead = 0;
    int deleted = 0;
    try {
      ch.confirmSelect();
      for (int s = totalSlots; s < mostSlots; s++) {
        for (Priority p : Priority.values()) {
          String q = topology.queue(s, p);
          try {
            ch.queueUnbind(q, topology.exchange(), topology.routingKey(s, p)); // first: nothing routed there from now on
            AMQP.Queue.DeclareOk ok = ch.queueDeclarePassive(q);
            if (ok.getConsumerCount() > 0) {
              consumed++;
              continue;
            }
            if (ok.getMessageCount() > 0) dead += deadLetter(ch, q, s, version);
            ch.queueDelete(q);
            deleted++;
          } catch (IOException e) {
            if (!gone(e)) throw failed(q, e);
            ch = c.createChannel(); // deleted by an earlier run: the broker closed the channel
            ch.confirmSelect();
          }
        }
      }
    } finally {
      if (ch.isOpen()) ch.close();
    }
    return new Drained(consumed, dead, deleted);
  }
}
