package dev.inspection.worker;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.inspection.common.Retry;
import dev.inspection.common.RetryPolicy;
import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import dev.inspection.coordination.Notifier;
import dev.inspection.messaging.BrokerConnections;
import dev.inspection.messaging.RabbitConnector;
import dev.inspection.messaging.RabbitOptions;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import dev.inspection.state.AlertRules;
import dev.inspection.store.Db;
import dev.inspection.store.PgOptions;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * The worker role: holds slot leases ({@link LeaseKeeper}) and runs one {@link SlotProcessor} per held
 * slot on a shared AMQP connection. Wiring only; the decisions live in the classes it wires.
 */
public final class WorkerVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(WorkerVerticle.class);
  /** A slot whose own load takes this long is logged at INFO with where its time went (issue 11: at most 200 ms for 4,000 devices). */
  static final long SLOW_LOAD_MS = 200;
  /**
   * Connections of the snapshot walks' pool: two walks read a page each at once (a walk reads one page at a time; a survivor's
   * takeover of every slot is one walk). Opened when a walk needs them, closed after a minute unused.
   */
  public static final int SNAPSHOT_CONNECTIONS = 2;

  private final Config config;
  private final Metrics metrics;
  private final Clock clock;
  private final Topology topology;
  private final String workerId;
  private final Runnable drained;
  private final Map<Integer, SlotProcessor> processors = new HashMap<>();
  /** What the gauges and tests read from other threads: published on this verticle's context after every change. */
  private volatile Map<Integer, Long> held = Map.of();
  private volatile int mailboxMessages;
  private long gaugeTimer = -1;
  /** One thread for every slot's acks, so that a slot's acks reach the broker in order. */
  private WorkerExecutor acks;
  /** Opens the slots' consumers: nine broker round trips per slot, many slots at once in a takeover. */
  private WorkerExecutor opens;
  /** Slots loaded and not yet consuming: their devices' state, at the epoch it was loaded for. */
  private final Map<Integer, Loaded> loaded = new HashMap<>();
  private final Map<Integer, long[]> rateMarks = new HashMap<>();
  private Pool pool;
  private SlotMapFollower slotMap;
  private long mapTimer = -1;
  /** Heartbeats, lease reads, renewals, activations and the slot map: never queued behind batch commits or snapshot loads. */
  private Pool controlPool;
  /**
   * The takeovers' snapshot walks (INV-10), apart from the control pool: a walk holds a connection for each page, and with
   * {@code device_status_current} locked (an operator's {@code VACUUM FULL} or {@code ALTER TABLE}) every walk waits on
   * its page. On the control pool, the walks of three lease reads took its three connections, and the heartbeats and
   * lease reads timed out waiting for one. Here they wait among themselves (a walk that cannot get a connection in time
   * fails, and the next lease read takes its slots again).
   */
  private Pool snapshotPool;
  private DbGate gate;
  private RabbitConnector connector;
  private DeadLetterPublisher deadLetters;
  private LeaseKeeper leases;
  private CommitGroup store;
  private DegradedMonitor degraded;
  private SpillPublisher spill;
  private BackFiller backFiller;
  /** Null with the history lock timeout off ({@code worker.degraded.history.lock.timeout.ms} 0, or the degraded mode off). */
  private HistoryLock historyLock;
  private SnapshotLoader snapshots;
  private DeviceDirectory directory;
  private final Map<Integer, AlertRules> rules = new HashMap<>();
  private SlotSettings settings;
  private SlotServices services;
  private Notifier notifier;

  public WorkerVerticle(Config config, Metrics metrics, Clock clock, Topology topology, Runnable drained) {
    this.config = config;
    this.metrics = metrics;
    this.clock = clock;
    this.topology = topology;
    this.workerId = config.nodeId();
    this.drained = drained;
  }

  public String workerId() {
    return workerId;
  }

  public boolean ready() {
    return connector != null && connector.isConnected() && gate != null && gate.healthy();
  }

  /** The DB-degraded write mode of this worker (mode, reason, since), for health details and tests. */
  public DegradedMonitor degraded() {
    return degraded;
  }

  /** Slots this worker holds and consumes, for the API and tests. */
  public Map<Integer, Long> heldSlots() {
    return held;
  }

  /** The slot map's versions as this worker last read them (tests, the console). */
  public SlotMapFollower slotMap() {
    return slotMap;
  }

  /** The lease follower, for tests (state, fault switch). */
  public LeaseKeeper leases() {
    return leases;
  }

  @Override
  public Future<?> start() {
    pool = Db.pool(vertx, PgOptions.from(config), config.getInt(Keys.PG_POOL_SIZE), "pg-worker");
    gate = new DbGate(vertx, pool, RetryPolicy.from(config));
    int poolSize = config.getInt(Keys.PG_POOL_SIZE);
    // history's lock timeout spills a locked history's rows to the back-fill queue: only with the degraded mode's spill on
    long historyLockTimeoutMs = config.getBool(Keys.WORKER_DEGRADED_ENABLED) ? config.getLong(Keys.WORKER_DEGRADED_HISTORY_LOCK_TIMEOUT_MS) : 0;
    historyLock = historyLockTimeoutMs > 0 ? new HistoryLock() : null;
    if (historyLock != null) {
      Gauge.builder("worker_history_locked", historyLock, h -> h.locked() ? 1 : 0)
          .description("1 while history counts as locked: a batch's history write waited out worker.degraded.history.lock.timeout.ms, and the batches"
              + " spill their history rows to the back-fill queue until one writes history again")
          .register(metrics.registry());
    }
    BatchStore batches = new BatchStore(pool, workerId, clock, config.getInt(Keys.WORKER_GENERIC_PLAN_MAX_RESULTS), historyLockTimeoutMs);
    FunctionCounter.builder("worker_history_rewrites_total", batches, BatchStore::rewrites)
        .description("commits written again with history's insert-or-ignore and the rollups' upsert: history held one of their results (a redelivery, a probe's replay) or a rollup row taken for new existed")
        .register(metrics.registry());
    store = new CommitGroup(vertx, batches, Math.max(1, poolSize / 2), 4 * config.getInt(Keys.WORKER_BATCH_MAX), config, metrics);
    metrics.commitLatency().windowMs(config.getLong(Keys.WORKER_COMMIT_P99_WINDOW_MS));
    degraded = new DegradedMonitor(DegradedMode.Settings.from(config), clock, metrics, workerId, gate::healthy)
        .start(vertx, config.getLong(Keys.WORKER_DEGRADED_TICK_MS));
    spill = new SpillPublisher(vertx, topology, workerId);
    backFiller = new BackFiller(vertx, pool, topology, degraded, gate, metrics, config.getInt(Keys.WORKER_BACKFILL_BATCH),
        config.getLong(Keys.WORKER_BACKFILL_INTERVAL_MS), workerId, historyLock, historyLockTimeoutMs, clock);
    store.degradedMode(degraded, spill, backFiller::store, historyLock, clock);
    controlPool = Db.pool(vertx, PgOptions.from(config), 3, "pg-worker-control");
    slotMap = new SlotMapFollower(controlPool, clock, topology.totalSlots());
    slotMap.refresh();
    mapTimer = vertx.setPeriodic(config.getLong(Keys.WORKER_LEASE_POLL_MS), t -> slotMap.refresh());
    directory = new DeviceDirectory(pool, config.getLong(Keys.WORKER_DIRECTORY_TTL_MS), config.getInt(Keys.WORKER_DIRECTORY_MAX_DEVICES), clock);
    for (Map.Entry<String, ToDoubleFunction<DeviceDirectory>> kind : Map.<String, ToDoubleFunction<DeviceDirectory>>of(
        "first", DeviceDirectory::firstReads, "again", DeviceDirectory::refreshed, "again_failed", DeviceDirectory::refreshFailed).entrySet()) {
      FunctionCounter.builder("worker_directory_reads_total", directory, kind.getValue()).tag("kind", kind.getKey())
          .description("devices whose inventory listing was read: first = before their batch could plan, again = in the background once aged"
              + " (worker.directory.ttl.ms), again_failed = such reads that failed and are tried again")
          .register(metrics.registry());
    }
    snapshotPool = Db.pool(vertx, PgOptions.from(config), SNAPSHOT_CONNECTIONS, "pg-worker-snapshot");
    snapshots = new SnapshotLoader(snapshotPool, config.getInt(Keys.WORKER_SNAPSHOT_PAGE), directory::listed);
    for (int p = 1; p <= 3; p++) rules.put(p, AlertRules.fromConfig(p, config::raw));
    deadLetters = new DeadLetterPublisher(vertx, topology, workerId);
    settings = SlotSettings.from(config);
    acks = vertx.createSharedWorkerExecutor("worker-acks-" + workerId + "-" + System.identityHashCode(this), 1);
    opens = vertx.createSharedWorkerExecutor("slot-open-" + workerId + "-" + System.identityHashCode(this), config.getInt(Keys.WORKER_CONSUMER_OPEN_THREADS));
    // the scrape runs on another thread: the gauges read what this context published, never the map itself
    metrics.workerGauges(() -> held.size(), () -> mailboxMessages, () -> leases == null ? -1 : leases.leaseCacheAgeMs());
    gaugeTimer = vertx.setPeriodic(1000, t -> mailboxMessages = processors.values().stream().mapToInt(SlotProcessor::mailboxSize).sum());
    connector = new RabbitConnector(vertx, RabbitOptions.from(config), RetryPolicy.from(config), "worker-" + workerId, this::connected, this::connectionLost);
    leases = new LeaseKeeper(vertx, clock, new LeaseStore(controlPool, workerId),
        new LivenessSession(vertx, Db.connectOptions(PgOptions.from(config)), config.get(Keys.PG_SCHEMA), workerId, RetryPolicy.from(config)),
        new LeaseKeeper.Settings(config.getLong(Keys.WORKER_LEASE_TTL_MS), config.getLong(Keys.WORKER_HEARTBEAT_MS),
            config.getLong(Keys.WORKER_LEASE_POLL_MS), config.getLong(Keys.WORKER_FAULT_FREEZE_HEARTBEAT_AFTER_MS), RetryPolicy.from(config)),
        new HeldSlots.Listener() {
          @Override
          public Future<Void> load(Map<Integer, Long> slots, Consumer<Collection<Integer>> done) {
            return snapshots.load(List.copyOf(slots.keySet()), snaps -> {
              for (SnapshotLoader.Snapshot snap : snaps) {
                // two walks may both hold a slot (dropped, then taken again while the first still loads): the later epoch's state stays
                loaded.merge(snap.slot(), new Loaded(slots.get(snap.slot()), SlotMemory.of(snap)), (was, now) -> now.epoch() >= was.epoch() ? now : was);
                metrics.moves().loaded(snap.millis());
                // a slow slot says where its time went: waiting for its pages, or reading them (CPU, pauses)
                log.atLevel(snap.millis() >= SLOW_LOAD_MS ? Level.INFO : Level.DEBUG).log(
                    "slot {}: {} devices loaded in {} ms over {} page(s), {} ms of it waiting for the pages (the database, or this worker's"
                        + " event loop busy with other slots), the rest reading them", snap.slot(), snap.devices(), snap.millis(), snap.pages(),
                    snap.waitedMillis());
              }
              done.accept(snaps.stream().map(SnapshotLoader.Snapshot::slot).toList());
            });
          }

          @Override
          public void consume(int slot, long epoch) {
            Loaded l = loaded.remove(slot);
            startSlot(slot, epoch, l == null || l.epoch() != epoch ? null : l.memory());
          }

          @Override
          public Future<Void> release(int slot, long epoch) {
            SlotProcessor p = processors.get(slot);
            if (p == null || p.epoch() != epoch) return Future.succeededFuture();
            long start = System.nanoTime();
            return p.close().onComplete(ar -> {
              if (processors.get(slot) == p) removeProcessor(slot);
              metrics.leaseChange("released");
              metrics.moves().released((System.nanoTime() - start) / 1_000_000);
              log.debug("worker {} released slot {} (epoch {})", workerId, slot, epoch);
            });
          }

          @Override
          public void lost(int slot, long epoch) {
            loaded.remove(slot);
            SlotProcessor p = processors.get(slot);
            if (p != null && p.epoch() == epoch) {
              removeProcessor(slot);
              p.abort();
              metrics.leaseChange("lost");
              log.info("worker {} lost slot {} (epoch {})", workerId, slot, epoch);
            }
          }
        }, this::backlog, drained);
    notifier = new Notifier(vertx, config.get(Keys.REDIS_URL), config.get(Keys.REDIS_CHANNEL_PREFIX),
        RetryPolicy.from(config), msg -> {
          // the leader or another worker changed leases: read ours now rather than at the next poll
          if (!msg.startsWith(workerId + " ")) leases.poll();
        });
    leases.onChange(() -> notifier.publish(workerId + " leases-changed"));
    notifier.start();
    services = new SlotServices(workerId, topology, () -> connector.isConnected() ? connector.connection() : null, acks, opens, store,
        deadLetters, gate, directory::lookup, rules::get, metrics, clock, (s, e, f) -> leases.forget(s, e), slotMap);
    // the leader's broker fence finds this worker's connections by these properties (messaging/BrokerFence)
    connector.clientProperties(BrokerConnections.workerProperties(workerId, config.get(Keys.TOPOLOGY_PREFIX))).onReady(this::consumeAll).start();
    backFiller.start(() -> connector.isConnected() ? connector.connection() : null);
    // the SQL merge reads the profiles' rules from the database; a failure here is retried by the first batch's error path
    new Retry(vertx, RetryPolicy.from(config), log).until("write the payload profiles", directory::publishProfiles);
    return leases.start();
  }

  /** Heartbeat payload: totals and, per slot, the terms of the slot weight (seed 000 §4.3). */
  private JsonObject backlog() {
    int mailbox = 0;
    long now = System.nanoTime();
    JsonObject perSlot = new JsonObject();
    Map<Integer, Long> lagBySlot = new HashMap<>();
    for (SlotProcessor p : processors.values()) {
      mailbox += p.mailboxSize();
      SlotStats st = p.stats();
      long[] mark = rateMarks.get(p.slot());
      JsonObject slot = new JsonObject();
      // a slot just taken has no rate and no batch time yet: left out, the leader keeps its previous owner's (SlotFigures)
      if (mark != null && mark[2] == p.epoch() && now > mark[1]) {
        slot.put("rate", Math.max(0, Math.round((st.committedTotal() - mark[0]) * 1e10 / (now - mark[1])) / 10.0));
      }
      rateMarks.put(p.slot(), new long[] {st.committedTotal(), now, p.epoch()});
      slot.put("backlog", p.mailboxSize());
      if (p.quiet()) slot.put("quiet", true); // nothing ready in its queues: the leader's queue sampler skips them
      if (st.averageBatchMs() > 0) slot.put("ms", Math.round(st.averageBatchMs() * 10) / 10.0);
      perSlot.put(Integer.toString(p.slot()), slot.put("lag_ms", st.lastLagMs()));
      lagBySlot.put(p.slot(), st.lastLagMs());
    }
    metrics.slots().lag(lagBySlot);
    rateMarks.keySet().retainAll(processors.keySet());
    // db_errors and commit_p99_ms feed the leader's fleet mode (issue 12: workers failing commits, commit latency)
    return new JsonObject().put("slots_held", processors.size()).put("mailbox", mailbox)
        .put("degraded", degraded.json().put("backfill_queue", backFiller.depth()).put("history_locked", historyLock != null && historyLock.locked()))
        .put("slots", perSlot)
        .put("db_errors", (long) metrics.count("worker_db_errors_total")).put("commit_p99_ms", commitP99Ms(clock.millis()));
  }

  /**
   * The heartbeat's commit p99: that of the last worker.commit.p99.window.ms, or the age of a commit still in flight if that is
   * longer, so a stalled database shows before its commits end (a transaction waiting on a lock reported nothing until it did).
   */
  private long commitP99Ms(long now) {
    long recent = metrics.commitLatency().recentP99Ms(now);
    long stuck = degraded.oldestInFlightMs(now);
    return stuck > 0 ? Math.max(recent, stuck) : recent;
  }

  private record Loaded(long epoch, SlotMemory memory) {}

  private void startSlot(int slot, long epoch, SlotMemory memory) {
    SlotProcessor old = processors.remove(slot);
    if (old != null) old.abort();
    SlotProcessor p = new SlotProcessor(vertx, slot, epoch, memory == null ? SlotMemory.EMPTY : memory, settings, services);
    processors.put(slot, p);
    publishHeld();
    metrics.leaseChange("gained");
    p.open();
  }

  private void removeProcessor(int slot) {
    processors.remove(slot);
    publishHeld();
  }

  private void publishHeld() {
    Map<Integer, Long> out = new HashMap<>();
    processors.forEach((s, p) -> out.put(s, p.epoch()));
    held = Map.copyOf(out);
  }

  private Future<Void> connected(Connection c) {
    return vertx.executeBlocking(() -> {
      Channel ch = c.createChannel();
      topology.declare(ch);
      ch.close();
      return null;
    }, false).map(v -> {
      deadLetters.use(c);
      spill.use(c);
      return null;
    });
  }

  /** After the connector reports ready: consume every held slot on the new connection. */
  private void consumeAll() {
    log.info("worker {} connected to RabbitMQ; consuming {} slot(s)", workerId, processors.size());
    new ArrayList<>(processors.values()).forEach(SlotProcessor::open);
  }

  private void connectionLost() {
    processors.values().forEach(SlotProcessor::connectionLost);
  }

  /**
   * D6, SIGTERM: this worker becomes DRAINING and the leader moves its slots to others (each one: stop,
   * commit, ack, hand over — no lease expiry, no redelivery). Whatever is not moved in time (no leader,
   * or the grace period is short) is released here the same way. Then OFFLINE.
   */
  @Override
  public Future<?> stop() {
    long grace = Math.max(2000, config.getLong(Keys.SHUTDOWN_GRACE_MS) - 3000);
    long deadline = clock.millis() + grace;
    int before = processors.size();
    long start = System.nanoTime();
    return leases.beginDrain()
        .compose(others -> others && leases.heldCount() > 0 ? leases.awaitHandover(deadline - grace / 4, 3000) : Future.<Void>succeededFuture())
        .compose(v -> {
          int left = leases.heldCount();
          if (left > 0) log.info("worker {}: the leader moved {} of {} slot(s); releasing the other {} here", workerId, before - left, before, left);
          return leases.releaseRemaining(deadline);
        })
        .eventually(() -> leases.offline())
        .onComplete(ar -> log.info("worker {} handed over {} slot(s) in {} ms and is OFFLINE", workerId, before,
            (System.nanoTime() - start) / 1_000_000))
        .eventually(() -> notifier.stop())
        .eventually(() -> connector.stop())
        .eventually(() -> {
          vertx.cancelTimer(gaugeTimer);
          vertx.cancelTimer(mapTimer);
          acks.close();
          opens.close();
          deadLetters.close();
          spill.close();
          backFiller.stop();
          degraded.stop(vertx);
          return pool.close().eventually(() -> controlPool.close()).eventually(() -> snapshotPool.close());
        });
  }
}
