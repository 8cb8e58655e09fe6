package dev.inspection.worker;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.inspection.coordination.Notifier;
import dev.inspection.messaging.Backoff;
import dev.inspection.messaging.RabbitConnector;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import dev.inspection.node.Config;
import dev.inspection.node.Keys;
import dev.inspection.store.Db;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker role: holds slot leases ({@link LeaseKeeper}) and runs one {@link SlotProcessor} per held
 * slot on a shared AMQP connection. Wiring only; the decisions live in the classes it wires.
 */
public final class WorkerVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(WorkerVerticle.class);

  private final Config config;
  private final Metrics metrics;
  private final Clock clock;
  private final Topology topology;
  private final String workerId;
  private final Map<Integer, SlotProcessor> processors = new HashMap<>();
  private Pool pool;
  private DbGate gate;
  private RabbitConnector connector;
  private DeadLetterPublisher deadLetters;
  private LeaseKeeper leases;
  private CommitGroup store;
  private SlotProcessor.Settings settings;
  private Notifier notifier;

  public WorkerVerticle(Config config, Metrics metrics, Clock clock, Topology topology) {
    this.config = config;
    this.metrics = metrics;
    this.clock = clock;
    this.topology = topology;
    this.workerId = config.nodeId();
  }

  public String workerId() {
    return workerId;
  }

  public boolean ready() {
    return connector != null && connector.isConnected() && gate != null && gate.healthy();
  }

  /** Slots this worker holds and consumes, for the API and tests. */
  public Map<Integer, Long> heldSlots() {
    return leases == null ? Map.of() : leases.held();
  }

  @Override
  public Future<?> start() {
    pool = Db.pool(vertx, config, config.getInt(Keys.PG_POOL_SIZE));
    gate = new DbGate(vertx, pool, new Backoff(config.getLong(Keys.BACKOFF_INITIAL_MS), config.getLong(Keys.BACKOFF_MAX_MS)));
    int poolSize = config.getInt(Keys.PG_POOL_SIZE);
    store = new CommitGroup(new BatchStore(pool, workerId), Math.max(1, poolSize / 2), 4 * config.getInt(Keys.WORKER_BATCH_MAX));
    deadLetters = new DeadLetterPublisher(vertx, topology, workerId);
    settings = new SlotProcessor.Settings(config.getInt(Keys.WORKER_PREFETCH_HIGH), config.getInt(Keys.WORKER_PREFETCH_NORMAL),
        config.getInt(Keys.WORKER_BATCH_MAX), config.getLong(Keys.WORKER_BATCH_LINGER_MS), config.getInt(Keys.WORKER_MAX_MESSAGE_BYTES));
    metrics.gauge("worker_slots_held", "slots this worker holds a lease on", () -> processors.size());
    metrics.gauge("worker_mailbox_messages", "deliveries waiting in this worker's slot mailboxes",
        () -> processors.values().stream().mapToInt(SlotProcessor::mailboxSize).sum());
    connector = new RabbitConnector(vertx, config, "worker-" + workerId, this::connected, this::connectionLost);
    leases = new LeaseKeeper(vertx, pool, workerId, new LeaseKeeper.Settings(topology.totalSlots(), config.getLong(Keys.WORKER_LEASE_TTL_MS),
        config.getLong(Keys.WORKER_HEARTBEAT_MS), config.getLong(Keys.WORKER_CLAIM_INTERVAL_MS), config.getInt(Keys.WORKER_MAX_SLOTS)),
        new LeaseKeeper.Listener() {
          @Override
          public void gained(int slot, long epoch) {
            startSlot(slot, epoch);
          }

          @Override
          public void lost(int slot, long epoch) {
            SlotProcessor p = processors.get(slot);
            if (p != null && p.epoch() == epoch) {
              processors.remove(slot);
              p.abort();
              metrics.leaseChange("lost");
              log.info("worker {} lost slot {} (epoch {})", workerId, slot, epoch);
            }
          }
        }, this::backlog);
    notifier = new Notifier(vertx, config.get(Keys.REDIS_URL), config.get(Keys.REDIS_CHANNEL_PREFIX),
        new Backoff(config.getLong(Keys.BACKOFF_INITIAL_MS), config.getLong(Keys.BACKOFF_MAX_MS)), msg -> {
          // another worker released or took slots: look at the database now rather than at the next poll
          if (!msg.startsWith(workerId + " ")) leases.claim();
        });
    leases.onChange(() -> notifier.publish(workerId + " leases-changed"));
    notifier.start();
    connector.onReady(this::consumeAll).start();
    return leases.start();
  }

  private JsonObject backlog() {
    int mailbox = 0;
    for (SlotProcessor p : processors.values()) mailbox += p.mailboxSize();
    return new JsonObject().put("slots", processors.size()).put("mailbox", mailbox);
  }

  private void startSlot(int slot, long epoch) {
    SlotProcessor old = processors.remove(slot);
    if (old != null) old.abort();
    SlotProcessor p = new SlotProcessor(vertx, slot, epoch, workerId, topology, store, deadLetters, gate, metrics, clock, settings,
        (s, e, f) -> leases.forget(s, e));
    p.onResume(() -> open(p));
    processors.put(slot, p);
    metrics.leaseChange("gained");
    open(p);
  }

  private void open(SlotProcessor p) {
    if (!connector.isConnected() || processors.get(p.slot()) != p || p.consuming()) return;
    p.open(connector.connection()).onFailure(e -> log.warn("slot {}: cannot start consuming ({}); retrying on reconnect", p.slot(), e.toString()));
  }

  private Future<Void> connected(Connection c) {
    return vertx.executeBlocking(() -> {
      Channel ch = c.createChannel();
      topology.declare(ch);
      ch.close();
      return null;
    }, false).map(v -> {
      deadLetters.use(c);
      return null;
    });
  }

  /** After the connector reports ready: consume every held slot on the new connection. */
  private void consumeAll() {
    log.info("worker {} connected to RabbitMQ; consuming {} slot(s)", workerId, processors.size());
    new ArrayList<>(processors.values()).forEach(this::open);
  }

  private void connectionLost() {
    processors.values().forEach(SlotProcessor::connectionLost);
  }

  /** D6: stop claiming, let every slot finish and ack what it holds, hand the leases back, go OFFLINE. */
  @Override
  public Future<?> stop() {
    leases.stopClaiming();
    List<Future<Void>> closing = new ArrayList<>();
    for (SlotProcessor p : processors.values()) closing.add(p.close());
    long grace = Math.max(1000, config.getLong(Keys.SHUTDOWN_GRACE_MS) - 5000);
    // a slot that cannot finish in time leaves its messages unacked: the broker redelivers them to the next owner
    return Future.join(closing).timeout(grace, java.util.concurrent.TimeUnit.MILLISECONDS)
        .eventually(() -> leases.releaseAll().onSuccess(n -> log.info("worker {} handed back {} lease(s) and is OFFLINE", workerId, n)))
        .eventually(() -> notifier.stop())
        .eventually(() -> connector.stop())
        .eventually(() -> {
          deadLetters.close();
          return pool.close();
        });
  }
}
