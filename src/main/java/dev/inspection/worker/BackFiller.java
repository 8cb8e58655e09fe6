package dev.inspection.worker;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import dev.inspection.common.DbWaits;
import dev.inspection.messaging.InvalidMessage;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import dev.inspection.store.Db;
import dev.inspection.worker.DbErrors.Kind;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.time.Clock;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drains the back-fill queue ({@link Spill}) into history and rollups while this worker is NORMAL and PostgreSQL
 * answers: up to {@code batch} spilled slot batches per round, each in its own transaction through
 * {@link HistoryRollups#write} (history insert-or-ignore, rollups counting each (cycle_id, seq) once: a batch
 * written twice counts once, D4), acked after its commit; {@code intervalMs} between rounds bounds the rate so the
 * live batches keep the database. Any worker may back-fill any slot's rows.
 *
 * <p>No lease check: the back-fill writes neither current status nor derived state, history rows are
 * insert-or-ignore and keep the writer_epoch they were consumed under (audit), so a slot's owner changing changes
 * nothing here. What must not interleave is a rollup row's read-back refold and another transaction's write of the
 * same row: the back-fill takes the slot's transaction-level advisory lock exclusively, and every live batch
 * transaction takes it shared with its lease check ({@link BatchStore#LEASE_CHECK}) — live batches never wait for
 * each other, and the back-fill of a slot waits for them (and they for it, one short transaction). One slot per
 * back-fill transaction, so the locks cannot form a cycle.
 *
 * <p>Pace: after a round the back-fill pauses as long as the round took, at most {@code intervalMs} — half of one
 * connection's time while the database answers quickly, less when it slows down. (A fixed 500 ms pause after 4
 * batches drained a 185,000-row spill at about 50 rows/s: most of an hour.) Live traffic is protected by the mode
 * itself: a database slow enough to put the worker back into the degraded mode stops the back-fill.
 *
 * <p>While history is locked ({@link HistoryLock}) no batch is taken: a back-fill that met the lock would requeue what it took, each
 * requeue a delivery towards the queue's {@code x-delivery-limit}. Instead, when a probe is due, a round asks for the locks a history
 * write takes ({@link #PROBE}, waiting at most {@code worker.degraded.history.lock.timeout.ms}), so a worker with no live batch still
 * learns that the lock went. Its transactions wait for a lock at most that long too, and one that waited that long marks history locked.
 *
 * <p>A body that is no spilled batch, or rows PostgreSQL refuses (a data error), are rejected without requeue: the
 * queue dead-letters them to {@code {prefix}.dlx}. Any other failure requeues and waits for the next round.
 */
public final class BackFiller {
  private static final Logger log = LoggerFactory.getLogger(BackFiller.class);
  /** The locks a history write takes, asked for and let go: whether an operator's lock on history or the rollups is still there. */
  static final String PROBE = "LOCK TABLE device_status_history, device_status_rollup_1m IN ROW EXCLUSIVE MODE";
  static final String LOCK_SLOT = "SELECT pg_advisory_xact_lock(hashtext('inspection.backfill.' || current_schema()), $1)::text";

  private record Got(long tag, byte[] body) {}

  private final Vertx vertx;
  private final Pool pool;
  private final Topology topology;
  private final DegradedMonitor monitor;
  private final DbGate gate;
  private final Metrics metrics;
  private final int batch;
  private final long intervalMs;
  private final WorkerExecutor thread;
  /** Null: none (the transaction waits for a lock as long as it lasts). */
  private final HistoryLock historyLock;
  private final long lockTimeoutMs;
  private final Clock clock;
  private Supplier<Connection> broker = () -> null;
  private Channel channel;
  private volatile long depth = -1;
  private long timer = -1;
  private boolean stopped;

  /** {@code historyLock}: null, or told when a back-fill waited out {@code lockTimeoutMs} for a lock, and asked before each round. */
  public BackFiller(Vertx vertx, Pool pool, Topology topology, DegradedMonitor monitor, DbGate gate, Metrics metrics, int batch, long intervalMs,
      String workerId, HistoryLock historyLock, long lockTimeoutMs, Clock clock) {
    this.historyLock = historyLock;
    this.lockTimeoutMs = historyLock == null ? 0 : lockTimeoutMs;
    this.clock = clock;
    this.vertx = vertx;
    this.pool = pool;
    this.topology = topology;
    this.monitor = monitor;
    this.gate = gate;
    this.metrics = metrics;
    this.batch = batch;
    this.intervalMs = intervalMs;
    this.thread = vertx.createSharedWorkerExecutor("backfill-" + workerId + "-" + System.identityHashCode(this), 1);
    metrics.backfillDepthGauge(() -> depth);
  }

  /** Starts the rounds; {@code connection}: the worker's broker connection when usable, else null. */
  public void start(Supplier<Connection> connection) {
    this.broker = connection;
    monitor.onChange(c -> {
      if (c.to() == DegradedMode.Mode.NORMAL) schedule(0); // recovered: start draining now
    });
    schedule(intervalMs);
  }

  public void stop() {
    stopped = true;
    if (timer >= 0) vertx.cancelTimer(timer);
    thread.close();
  }

  /** Spilled batches in the queue as last seen (-1: not read yet). */
  public long depth() {
    return depth;
  }

  private void schedule(long delay) {
    if (stopped) return;
    if (timer >= 0) vertx.cancelTimer(timer);
    timer = vertx.setTimer(Math.max(1, delay), t -> {
      timer = -1;
      round();
    });
  }

  /** Running, NORMAL and PostgreSQL answering: a round may run (and probe history). */
  private boolean databaseFree() {
    return !stopped && !monitor.degraded() && gate.healthy();
  }

  /** A round may take spilled batches and write them: also history not locked. */
  private boolean mayRun() {
    return databaseFree() && (historyLock == null || !historyLock.locked());
  }

  private void round() {
    Connection c = broker.get();
    if (!databaseFree() || c == null) {
      schedule(10 * intervalMs);
      return;
    }
    if (historyLock != null && historyLock.locked()) {
      if (!historyLock.writesHistory(clock.millis())) schedule(intervalMs); // the probe is not due yet, or a live batch is it
      else probe().onComplete(ar -> schedule(historyLock.locked() ? intervalMs : 1));
      return;
    }
    long started = System.nanoTime();
    thread.executeBlocking(() -> {
      if (channel == null || !channel.isOpen()) channel = c.createChannel();
      List<Got> got = new ArrayList<>();
      while (got.size() < batch) {
        GetResponse r = channel.basicGet(topology.backfillQueue(), false);
        if (r == null) {
          depth = 0;
          break;
        }
        depth = r.getMessageCount();
        got.add(new Got(r.getEnvelope().getDeliveryTag(), r.getBody()));
      }
      return got;
    }, true).compose(this::writeAll).onComplete(ar -> {
      if (ar.failed()) log.warn("back-fill round stopped: {}; the rest waits for the next round", String.valueOf(ar.cause()));
      boolean more = ar.succeeded() && ar.result() && depth != 0;
      // at most half of the time of one connection: a pause as long as the round took, up to intervalMs
      long took = (System.nanoTime() - started) / 1_000_000;
      schedule(more ? Math.min(intervalMs, Math.max(1, took)) : 10 * intervalMs);
    });
  }

  /** Writes the batches one after the other; true when all of them were settled. */
  private Future<Boolean> writeAll(List<Got> got) {
    Future<Boolean> chain = Future.succeededFuture(true);
    for (Got g : got) {
      chain = chain.compose(ok -> ok && mayRun() ? write(g) : settle(g.tag(), false, true).map(false));
    }
    return chain;
  }

  private Future<Boolean> write(Got g) {
    Spill.Batch b;
    try {
      b = Spill.decode(g.body());
    } catch (InvalidMessage e) {
      log.warn("back-fill: not a spilled batch ({}); dead-lettered", e.getMessage());
      return settle(g.tag(), false, false).map(true);
    }
    return store(b).transform(ar -> {
          if (ar.succeeded()) {
            return settle(g.tag(), true, false).map(v -> {
              metrics.backfilled(b.rows().size());
              log.debug("back-filled {} result(s) of slot {} ({} new history row(s))", b.rows().size(), b.slot(), ar.result());
              return true;
            });
          }
          DbErrors.DbError e = DbErrors.of(ar.cause());
          if (e.kind() == Kind.POISON) {
            log.warn("back-fill: PostgreSQL refuses a spilled batch of slot {} ({}); dead-lettered", b.slot(), e.describe());
            return settle(g.tag(), false, false).map(true);
          }
          if (historyLock != null && DbWaits.isLockTimeout(ar.cause()) && historyLock.timedOut(clock.millis())) {
            log.warn("back-fill: a lock on history or the rollups held its transaction {} ms (worker.degraded.history.lock.timeout.ms); history counts"
                + " as locked: the batches spill their history rows until it takes rows again", lockTimeoutMs);
          }
          log.info("back-fill of slot {} failed ({}); requeued", b.slot(), e.describe());
          return settle(g.tag(), false, true).map(false);
        });
  }

  /**
   * Writes spilled batches straight into history and rollups, one transaction each, in order (what the back-fill does
   * with a batch from the queue): also the fallback when a spill cannot be published, so the deliveries can still be
   * acked with nothing lost. The future holds the history rows inserted.
   */
  public Future<Integer> store(List<Spill.Batch> batches) {
    Future<Integer> chain = Future.succeededFuture(0);
    for (Spill.Batch b : batches) chain = chain.compose(n -> store(b).map(m -> n + m));
    return chain;
  }

  private Future<Integer> store(Spill.Batch b) {
    List<HistoryRollups.Item> items = new ArrayList<>(b.rows().size());
    for (StatePlanner.HistoryRow h : b.rows()) items.add(new HistoryRollups.Item(b.slot(), b.epoch(), h));
    items.sort(Comparator.comparing((HistoryRollups.Item h) -> h.row().envelope().deviceId()).thenComparingLong(h -> h.row().envelope().cycleId())
        .thenComparingLong(h -> h.row().envelope().seq()));
    return Db.inTransaction(pool, conn -> {
      // ahead of the slot's lock in the same pipeline: the whole transaction waits at most this long for a lock
      if (lockTimeoutMs > 0) conn.preparedQuery(BatchStore.HISTORY_LOCK_TIMEOUT).execute(Tuple.of(String.valueOf(lockTimeoutMs)));
      return conn.preparedQuery(LOCK_SLOT).execute(Tuple.of(b.slot()))
          .compose(v -> HistoryRollups.write(conn, items, JsonObject::toBuffer, b.committedAtMs() > 0
              ? OffsetDateTime.ofInstant(Instant.ofEpochMilli(b.committedAtMs()), ZoneOffset.UTC) : null, false));
    });
  }

  /** Asks for the locks a history write takes ({@link #PROBE}) and tells {@link #historyLock} what it met. */
  private Future<Void> probe() {
    return Db.inTransaction(pool, conn -> {
      conn.preparedQuery(BatchStore.HISTORY_LOCK_TIMEOUT).execute(Tuple.of(String.valueOf(lockTimeoutMs)));
      return conn.query(PROBE).execute().<Void>mapEmpty();
    }).transform(ar -> {
      if (ar.succeeded()) CommitGroup.historyAnswers(historyLock.wrote(clock.millis()));
      else if (DbWaits.isLockTimeout(ar.cause())) historyLock.timedOut(clock.millis());
      else historyLock.probeEnded();
      return Future.<Void>succeededFuture();
    });
  }

  /** Acks, or rejects with or without requeue; a failure leaves the delivery to come back when the channel closes. */
  private Future<Void> settle(long tag, boolean ack, boolean requeue) {
    return thread.executeBlocking(() -> {
      if (ack) channel.basicAck(tag, false);
      else channel.basicReject(tag, requeue);
      return null;
    }, true).recover(t -> Future.succeededFuture()).mapEmpty();
  }
}
