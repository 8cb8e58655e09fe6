package dev.inspection.scheduler;

import dev.inspection.common.ApiError;
import dev.inspection.common.RetryPolicy;
import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import dev.inspection.control.WorkerState;
import dev.inspection.coordination.Notifier;
import dev.inspection.messaging.BrokerFence;
import dev.inspection.messaging.RabbitConnector;
import dev.inspection.messaging.RabbitOptions;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import dev.inspection.store.Db;
import dev.inspection.store.PgOptions;
import io.micrometer.core.instrument.Gauge;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.ResponseType;
import io.vertx.sqlclient.Pool;
import java.time.Clock;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler role: the inventory API that probes pull from, leader election ({@link Leadership}) and,
 * while leading, the control loop ({@link ControlLoop}). Followers serve the read-only API and refuse
 * mutations with a pointer to the leader. Wiring only.
 */
public final class SchedulerVerticle extends VerticleBase implements Operations.Leader {
  private static final Logger log = LoggerFactory.getLogger(SchedulerVerticle.class);

  private final Config config;
  private final Metrics metrics;
  private final Clock clock;
  private final Supplier<String> apiUrl;
  private Pool pool;
  /**
   * The statements of HTTP requests (the API's views, the audit log) and of the dead-letter and shed desks, with
   * {@code lock_timeout} = {@code api.lock.timeout.ms}: never queued ahead of the leader's own work, which keeps {@link #pool}.
   */
  private Pool apiPool;
  /** The connections of {@link #apiPool}: the console's and the probes' requests, and the desks' writes. */
  static final int API_CONNECTIONS = 3;
  private DeviceStore devices;
  private SlotMaps slotMaps;
  private ClusterView view;
  private StateView state;
  private HotelView hotels;
  private Leadership leadership;
  private ControlLoop loop;
  private Notifier notifier;
  private PartitionKeeper keeper;
  private final Jobs jobs = new Jobs();
  private RabbitConnector connector;
  private DeadLetterDesk deadLetters;
  private ShedDesk shed;
  private QueueSampler queues;
  private Operations operations;
  private Redis redis;
  private volatile boolean dbOk;
  private AuditLog audit;
  private Notifier fleetChannel;
  /** The leader announces the cold-start pace here, for probes without probe.inventory.url (issue 14 item 2). */
  private Notifier pacingChannel;
  private FleetModeKeeper fleetMode;
  private BrokerFence fence;

  public SchedulerVerticle(Config config, Metrics metrics, Clock clock, Supplier<String> apiUrl) {
    this.config = config;
    this.metrics = metrics;
    this.clock = clock;
    this.apiUrl = apiUrl;
  }

  public DeviceStore devices() {
    return devices;
  }

  public ClusterView view() {
    return view;
  }

  public StateView state() {
    return state;
  }

  public HotelView hotels() {
    return hotels;
  }

  public Jobs jobs() {
    return jobs;
  }

  public ShedDesk shed() {
    return shed;
  }

  public DeadLetterDesk deadLetters() {
    return deadLetters;
  }

  /** Every API mutation and console login (issue 10). */
  public AuditLog audit() {
    return audit;
  }

  public QueueSampler queues() {
    return queues;
  }

  /** The fleet mode (issue 12): decided and stored by the leader, read by every scheduler. */
  public FleetModeKeeper fleetMode() {
    return fleetMode;
  }

  /** What the API may change, each command run on this verticle's context. */
  public Operations operations() {
    return operations;
  }

  /** Probes' latest reports (each probe writes its line of the hash {prefix}:probes every 5 s); silent for 60 s = gone. */
  public Future<JsonArray> probes() {
    return redis.send(Request.cmd(Command.HGETALL).arg(config.get(Keys.REDIS_CHANNEL_PREFIX) + ":probes"))
        .map(all -> {
          JsonArray a = new JsonArray();
          long now = clock.millis();
          List<String> values = new ArrayList<>();
          if (all != null && all.type() == ResponseType.MULTI && !all.getKeys().isEmpty()) {
            for (String k : all.getKeys()) values.add(all.get(k).toString()); // RESP3 map
          } else if (all != null && all.size() > 0) {
            for (int i = 1; i < all.size(); i += 2) values.add(all.get(i).toString()); // RESP2: key, value, key, value
          }
          {
            for (String v : values) {
              JsonObject p = new JsonObject(v);
              long age = now - p.getLong("at", 0L);
              a.add(p.put("report_age_s", age / 1000.0).put("silent", age > 60_000));
            }
          }
          return a;
        });
  }

  public SlotMaps slotMaps() {
    return slotMaps;
  }

  public boolean ready() {
    return dbOk;
  }

  public boolean leading() {
    return leadership != null && leadership.leading();
  }

  public long term() {
    return leadership == null ? -1 : leadership.term();
  }

  public int minWorkers() {
    return config.getInt(Keys.SCHEDULER_MIN_WORKERS);
  }

  @Override
  public Future<?> start() {
    pool = Db.pool(vertx, PgOptions.from(config), Math.max(2, config.getInt(Keys.PG_POOL_SIZE) / 2), "pg-scheduler");
    // what HTTP requests and the desks run waits for a lock at most api.lock.timeout.ms, on connections of their own: requests
    // that waited on a locked table (VACUUM FULL on device_status_current, alert_current, dead_letter) took the pool's four
    // connections, and the leader's rounds and the node's own health check timed out waiting for one
    apiPool = Db.pool(vertx, PgOptions.from(config), API_CONNECTIONS, "pg-api",
        Map.of("lock_timeout", Long.toString(config.getLong(Keys.API_LOCK_TIMEOUT_MS))));
    devices = new DeviceStore(apiPool);
    audit = new AuditLog(apiPool);
    view = new ClusterView(apiPool);
    state = new StateView(apiPool);
    hotels = new HotelView(apiPool);
    String schema = config.get(Keys.PG_SCHEMA);
    ControlStore store = new ControlStore(pool, schema);
    RebalancePlanner.Settings planner = new RebalancePlanner.Settings(config.getDouble(Keys.SCHEDULER_REBALANCE_THRESHOLD),
        config.getInt(Keys.SCHEDULER_REBALANCE_MAX_MOVES), config.getLong(Keys.SCHEDULER_COOLDOWN_SLOT_MS), config.getLong(Keys.SCHEDULER_COOLDOWN_SOURCE_MS));
    SlotWeight.Coefficients weights = new SlotWeight.Coefficients(config.getDouble(Keys.SCHEDULER_WEIGHT_DEVICES), config.getDouble(Keys.SCHEDULER_WEIGHT_RATE),
        config.getDouble(Keys.SCHEDULER_WEIGHT_BACKLOG), config.getDouble(Keys.SCHEDULER_WEIGHT_PROCESS_MS), config.getDouble(Keys.SCHEDULER_WEIGHT_CRITICAL));
    ControlLoop.Settings settings = new ControlLoop.Settings(config.getLong(Keys.SCHEDULER_TICK_MS), config.getLong(Keys.WORKER_HEARTBEAT_MS),
        config.getLong(Keys.WORKER_SUSPECT_AFTER_MS),
        config.getLong(Keys.WORKER_DEAD_AFTER_MS), config.getLong(Keys.WORKER_WARMUP_MS), config.getLong(Keys.WORKER_QUARANTINE_MS),
        config.getLong(Keys.WORKER_LEASE_TTL_MS), config.getLong(Keys.SCHEDULER_LEASE_EXPIRY_GRACE_MS), config.getLong(Keys.SCHEDULER_MOVE_TIMEOUT_MS),
        config.getLong(Keys.SCHEDULER_LEADER_GRACE_MS), config.getInt(Keys.SCHEDULER_DRAIN_BATCH), config.getLong(Keys.SCHEDULER_REBALANCE_INTERVAL_MS),
        planner, weights, config.getInt(Keys.SLOTS_TOTAL), waves(config), config.getLong(Keys.SCHEDULER_DEVICE_COUNT_INTERVAL_MS));
    notifier = new Notifier(vertx, config.get(Keys.REDIS_URL), config.get(Keys.REDIS_CHANNEL_PREFIX),
        RetryPolicy.from(config), msg -> {
          // a worker released a slot, finished loading, or is draining: decide now rather than at the next tick
          if (loop != null && !msg.startsWith("leader ")) loop.kick();
        });
    leadership = new Leadership(vertx, Db.connectOptions(PgOptions.from(config)), config.getLong(Keys.SCHEDULER_LEADER_SESSION_TIMEOUT_MS), pool,
        config.nodeId(), schema, apiUrl, config.getLong(Keys.SCHEDULER_ELECTION_MS),
        config.getLong(Keys.SCHEDULER_LOCK_TIMEOUT_MS), new Leadership.Listener() {
          @Override
          public void elected(long term) {
            metrics.leaderElected();
            loop.elected();
            retention();
          }

          @Override
          public void deposed(String why) {
            metrics.leaderDeposed();
            loop.deposed();
          }
        });
    fence = new BrokerFence(vertx, BrokerFence.Settings.from(config));
    LivenessWatch watch = new LivenessWatch(vertx, Db.connectOptions(PgOptions.from(config)), schema, () -> {
      metrics.livenessFreed();
      loop.kick();
    }, clock::millis);
    loop = new ControlLoop(vertx, store, leadership, notifier::publish, metrics, clock, settings, fence, watch);
    fence.check();
    metrics.schedulerGauges(() -> leading() ? 1 : 0, this::term);
    keeper = new PartitionKeeper(new PartitionKeeper.Settings(config.getInt(Keys.RETENTION_HISTORY_DAYS_HIGH),
        config.getInt(Keys.RETENTION_HISTORY_DAYS_NORMAL), config.getInt(Keys.RETENTION_ALERT_DAYS), config.getInt(Keys.RETENTION_ROLLUP_DAYS),
        config.getInt(Keys.RETENTION_AHEAD_DAYS)));
    vertx.setPeriodic(config.getLong(Keys.RETENTION_CHECK_MS), t -> retention());
    Topology topology = Topology.of(config);
    deadLetters = new DeadLetterDesk(vertx, apiPool, topology, jobs, config.nodeId());
    shed = new ShedDesk(vertx, apiPool, topology, config.nodeId());
    Map.of("dead_letters", (BooleanSupplier) deadLetters::consuming, "shed", shed::consuming).forEach((desk, consuming) -> Gauge
        .builder("scheduler_desk_consuming", () -> consuming.getAsBoolean() ? 1 : 0).tag("desk", desk)
        .description("1 while this scheduler's desk consumes its queue (0: what reaches the queue waits there, not listed)").register(metrics.registry()));
    slotMaps = new SlotMaps(pool, leadership, new ReshardPlan.Settings(Duration.ofMillis(config.getLong(Keys.RESHARD_EFFECTIVE_AFTER_MS)),
        Duration.ofMillis(config.getLong(Keys.RESHARD_WINDOW_END_MS))), new SlotRetire(vertx, leadership::fenced, topology,
        () -> connector != null && connector.isConnected() ? connector.connection() : null, "leader " + config.nodeId()), loop::devicesMoved);
    operations = new Operations(context, this, devices, state, deadLetters, jobs, slotMaps);
    vertx.setPeriodic(config.getLong(Keys.SCHEDULER_TICK_MS), t -> slotMaps.switchDue());
    vertx.setPeriodic(0, 5_000, t -> slotMaps.countSlots());
    connector = new RabbitConnector(vertx, RabbitOptions.from(config), RetryPolicy.from(config), "scheduler-" + config.nodeId(),
        c -> deadLetters.connected(c).compose(v -> shed.connected(c)),
        deadLetters::connectionLost);
    connector.start();
    long sampleMs = config.getLong(Keys.SCHEDULER_QUEUE_SAMPLE_MS);
    queues = new QueueSampler(vertx, topology, () -> slotMaps.slotCount(), () -> connector.isConnected() ? connector.connection() : null, sampleMs, metrics.slots(),
        loop::quietSlots, config.getLong(Keys.SCHEDULER_QUEUE_SAMPLE_FULL_MS));
    fleetChannel = new Notifier(vertx, config.get(Keys.REDIS_URL), config.get(Keys.REDIS_CHANNEL_PREFIX), "fleet-mode", RetryPolicy.from(config), msg -> { });
    fleetMode = new FleetModeKeeper(vertx, pool, store, queues, leadership, fleetChannel, metrics, clock, FleetModeKeeper.settings(config), sampleMs);
    redis = Redis.createClient(vertx, new RedisOptions().setConnectionString(config.get(Keys.REDIS_URL))
        .setMaxPoolSize(2).setMaxPoolWaiting(50));
    notifier.start();
    fleetChannel.start();
    pacingChannel = new Notifier(vertx, config.get(Keys.REDIS_URL), config.get(Keys.REDIS_CHANNEL_PREFIX), "pacing", RetryPolicy.from(config), msg -> { });
    pacingChannel.start();
    vertx.setPeriodic(config.getLong(Keys.PROBE_PACING_REFRESH_MS), t -> {
      if (leading()) view.pacing(minWorkers()).onSuccess(p -> pacingChannel.publish(p.encode()));
    });
    campaignAfterWarmUp(config.getLong(Keys.SCHEDULER_LEADER_SESSION_TIMEOUT_MS));
    fleetMode.start();
    vertx.setPeriodic(0, 2000, t -> pool.query("SELECT 1").execute().onComplete(ar -> dbOk = ar.succeeded()));
    return Future.succeededFuture();
  }

  /**
   * Starts the election once this node's first Redis and database round trips are done, or after {@code maxWaitMs}
   * (a Redis that is down fails fast; one that swallows packets is waited for no longer). Issue 14's double election:
   * the first Redis connect's class loading blocked this event loop for 6.6 s on a loaded machine right before the
   * node was elected; a leader whose loop stalls like that for longer than its lock session's idle timeout loses the
   * session and is elected again under a new term. First-use work belongs before the campaign, not inside a term.
   */
  private void campaignAfterWarmUp(long maxWaitMs) {
    long started = System.nanoTime();
    Future.join(redis.send(Request.cmd(Command.PING)), pool.query("SELECT 1").execute())
        .timeout(maxWaitMs, TimeUnit.MILLISECONDS)
        .onComplete(ar -> {
          // the timeout fires on Netty's global executor: Leadership.start moves to its own context itself
          long ms = (System.nanoTime() - started) / 1_000_000;
          if (ar.succeeded()) log.info("scheduler warmed up in {} ms (first Redis and database round trips): campaigning for leader", ms);
          else log.info("scheduler campaigns for leader after {} ms without a complete warm-up ({})", ms, ar.cause().getMessage());
          leadership.start();
        });
  }

  /** Wave sizing of cold start and scale-out ({@link ScaleOutPlanner}); a bad combination stops start-up naming the rule. */
  static ScaleOutPlanner.Settings waves(Config config) {
    return new ScaleOutPlanner.Settings(config.getInt(Keys.SCHEDULER_WAVE_FIRST), config.getInt(Keys.SCHEDULER_WAVE_MIN), config.getInt(Keys.SCHEDULER_WAVE_MAX),
        config.getLong(Keys.SCHEDULER_WAVE_FAST_MS), config.getLong(Keys.SCHEDULER_WAVE_SLOW_MS), config.getDouble(Keys.SCHEDULER_WAVE_COMMIT_P99_MS),
        config.getDouble(Keys.SCHEDULER_WAVE_BACKLOG_PER_SLOT), config.getLong(Keys.SCHEDULER_JOIN_WINDOW_MS));
  }

  /** Leader only: day partitions ahead of time, expired ones dropped (INV-20). */
  public Future<PartitionKeeper.Plan> retention() {
    if (!leading()) return Future.succeededFuture(new PartitionKeeper.Plan(List.of(), List.of()));
    LocalDate today = LocalDate.now(clock.withZone(ZoneOffset.UTC));
    return leadership.fenced(c -> keeper.apply(c, today)).onSuccess(p -> {
      if (!p.create().isEmpty() || !p.drop().isEmpty()) {
        log.info("retention: created {} partition(s), dropped {} ({})",
            p.create().size() - keeper.failed().size(), p.drop().size(), p.drop().stream().map(d -> d.substring("DROP TABLE ".length())).toList());
      }
      metrics.retention(p.create().size() - keeper.failed().size(), p.drop().size());
      for (String f : keeper.failed()) {
        log.warn("retention: cannot create partition {} — move those rows out of the"
            + " default partition (they came with a clock far off) and it will be created on the next run", f);
      }
    }).onFailure(e -> log.warn("retention run failed: {}", e.getMessage()));
  }

  /**
   * Starts a drain (D6, scenario C): the worker becomes DRAINING, the leader moves its slots out in
   * batches and marks it OFFLINE when it holds none; the worker then exits.
   */
  public Future<JsonObject> drain(String workerId) {
    if (!leading()) return notLeader();
    return view.worker(workerId).compose(w -> {
      if (w == null) return Future.failedFuture(new ApiError(404, "unknown worker '" + workerId + "': GET /api/v1/workers lists them"));
      WorkerState st = WorkerState.parse(w.getString("state"));
      if (st == WorkerState.DRAINING) return Future.succeededFuture(w);
      if (!st.canMoveTo(WorkerState.DRAINING)) {
        return Future.failedFuture(new ApiError(409, "worker '" + workerId + "' is " + st + " and cannot be drained (only a worker that may hold slots can)"));
      }
      long term = leadership.term();
      int held = w.getLong("slots_held").intValue();
      return leadership.fenced(c -> ControlStore.drain(c, workerId, st, "drain requested via API", term, held)).compose(ok -> {
        if (!ok) return Future.failedFuture(new ApiError(409, "worker '" + workerId + "' changed state meanwhile; read it again and retry"));
        metrics.workerTransition(st.name(), WorkerState.DRAINING.name());
        loop.kick();
        return view.worker(workerId);
      });
    });
  }

  /**
   * Takes a misbehaving worker out at once: it is declared DEAD (its slots move with an epoch bump, so
   * nothing it still writes commits); when it heartbeats again it goes through QUARANTINE and WARMING.
   */
  public Future<JsonObject> quarantine(String workerId) {
    if (!leading()) return notLeader();
    return view.worker(workerId).compose(w -> {
      if (w == null) return Future.failedFuture(new ApiError(404, "unknown worker '" + workerId + "': GET /api/v1/workers lists them"));
      WorkerState st = WorkerState.parse(w.getString("state"));
      if (!st.canMoveTo(WorkerState.DEAD)) {
        return Future.failedFuture(new ApiError(409, "worker '" + workerId + "' is " + st + ": only a live worker can be quarantined"));
      }
      long term = leadership.term();
      return leadership.fenced(c -> ControlStore.applyWorkerChanges(c, List.of(new ControlStore.WorkerChange(workerId, st,
          WorkerState.DEAD, "quarantined by an operator")), term)).compose(done -> {
            if (done.isEmpty()) return Future.failedFuture(new ApiError(409, "worker '" + workerId + "' changed state meanwhile; read it again and retry"));
            metrics.workerTransition(st.name(), WorkerState.DEAD.name());
            fence.closeWorker(workerId, "quarantined by an operator");
            loop.kick();
            return view.worker(workerId);
          });
    });
  }

  /** Mutations that need the leader are refused elsewhere with a pointer to it. */
  public Future<Void> requireLeader() {
    return leading() ? Future.succeededFuture() : notLeader();
  }

  private <T> Future<T> notLeader() {
    return view.leader().compose(l -> Future.failedFuture(new ApiError(409, "this scheduler is a follower; send mutations to the leader "
        + (l.getString("leader_url") == null ? "(none elected yet: retry in a few seconds)" : l.getString("leader_url")), l)));
  }

  @Override
  public Future<?> stop() {
    if (fleetMode != null) fleetMode.stop();
    return leadership.stop().eventually(() -> notifier.stop()).eventually(() -> fleetChannel.stop()).eventually(() -> pacingChannel.stop()).eventually(() -> connector.stop()).eventually(() -> {
      deadLetters.close();
      shed.close();
      queues.close();
      fence.close();
      return redis.close();
    }).eventually(() -> pool.close()).eventually(() -> apiPool.close());
  }
}
