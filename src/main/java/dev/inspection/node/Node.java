package dev.inspection.node;

import dev.inspection.admin.AlertRoutes;
import dev.inspection.admin.Credentials;
import dev.inspection.admin.DeadLetterRoutes;
import dev.inspection.admin.DetailedCheck;
import dev.inspection.admin.DeviceRoutes;
import dev.inspection.admin.FleetModeRoutes;
import dev.inspection.admin.HotelRoutes;
import dev.inspection.admin.HttpApi;
import dev.inspection.admin.HttpTls;
import dev.inspection.admin.JobRoutes;
import dev.inspection.admin.OverviewRoutes;
import dev.inspection.admin.ProbeRoutes;
import dev.inspection.admin.ShedRoutes;
import dev.inspection.admin.Routes;
import dev.inspection.admin.SlotMapRoutes;
import dev.inspection.admin.SlotRoutes;
import dev.inspection.admin.WorkerRoutes;
import dev.inspection.common.BuildInfo;
import dev.inspection.common.Retry;
import dev.inspection.common.RetryPolicy;
import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import dev.inspection.config.LogSetup;
import dev.inspection.config.Role;
import dev.inspection.inventory.TargetPolicy;
import dev.inspection.messaging.RabbitOptions;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import dev.inspection.probe.IngestRoutes;
import dev.inspection.probe.ProbeVerticle;
import dev.inspection.probe.PushSimulator;
import dev.inspection.scheduler.Operations;
import dev.inspection.scheduler.SchedulerVerticle;
import dev.inspection.state.AlertRules;
import dev.inspection.store.Db;
import dev.inspection.store.Migrations;
import dev.inspection.store.PgOptions;
import dev.inspection.worker.DegradedMode;
import dev.inspection.worker.SlotSettings;
import dev.inspection.worker.WorkerVerticle;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.sqlclient.Pool;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node: a Vert.x instance with the verticles of its role. Used by {@link Main} and by the
 * integration tests, which start several nodes in one JVM, each with its own schema and queue names.
 */
public final class Node {
  private static final Logger log = LoggerFactory.getLogger(Node.class);

  private final Config config;
  private final Clock clock;
  private final Metrics metrics;
  private Vertx vertx;
  private ProbeVerticle probe;
  private WorkerVerticle worker;
  private SchedulerVerticle scheduler;
  private HttpApi http;
  private PushSimulator pushSim;

  public Node(Config config, Clock clock) {
    this.config = config;
    this.clock = clock;
    this.metrics = Metrics.prometheus(config.nodeId(), config.get(Keys.ROLE).trim().toLowerCase(java.util.Locale.ROOT));
    BuildInfo build = BuildInfo.current();
    metrics.buildInfo(build.version(), build.commit());
  }

  /** Every check of a configuration that goes across keys, including the alert rules it describes; each failure names the key. */
  public static void validate(Config config) {
    Config.validateAll(config);
    PgOptions.validated(config); // pg.schema must be a plain identifier, pg.ssl.mode known, pg.tls.ca readable
    RabbitOptions.validated(config); // rabbit.tls.ca readable
    HttpTls.check(config); // http.tls.cert and http.tls.key both given and readable
    AdvertisedUrl.check(config.get(Keys.HTTP_ADVERTISED_URL));
    LogSetup.format(config); // log.format text | json
    SlotSettings.from(config); // history.policy and its companions
    DegradedMode.Settings.from(config); // worker.degraded.* thresholds (exit below enter), worker.backfill.*
    for (int p = 1; p <= 3; p++) {
      try {
        AlertRules.fromConfig(p, config::raw);
      } catch (IllegalArgumentException e) {
        throw new ConfigException("alert rules: " + e.getMessage());
      }
    }
  }

  public Future<Void> start() {
    Role role = config.role();
    Credentials credentials;
    try {
      // the API refuses to start without real secrets (demo mode generates them)
      credentials = role.runsScheduler() ? Credentials.resolve(config, System.out) : null;
      // no well-known broker account outside demo mode (the superuser check needs PostgreSQL: see migrate)
      CredentialPolicy.checkRabbit(config);
    } catch (ConfigException e) {
      return Future.failedFuture(e);
    }
    if (role.runsProbe() && !config.get(Keys.PROBE_INVENTORY_URL).isBlank() && config.get(Keys.PROBE_API_TOKEN).isBlank()) {
      return Future.failedFuture(new ConfigException("probe.api.token is missing while probe.inventory.url is set: set INSPECT_PROBE_API_TOKEN"
          + " to this probe group's token from the scheduler's api.probe.tokens"));
    }
    initNettyAllocatorEvents();
    // an event loop blocked past the 2 s limit logs where it is stuck (Vert.x' default prints the stack only after 5 s)
    // Vert.x' own meters (PostgreSQL pool, worker pools, HTTP server) go to this node's registry
    vertx = metrics.vertxBuilder(new VertxOptions().setBlockedThreadCheckInterval(1000).setWarningExceptionTime(2)
        .setWarningExceptionTimeUnit(TimeUnit.SECONDS)).build();
    metrics.watchEventLoop(vertx);
    Topology topology = Topology.of(config);
    Future<Void> ready = Future.succeededFuture();
    if (role.runsWorker() || role.runsScheduler()) ready = migrate();
    Map<String, BooleanSupplier> checks = new LinkedHashMap<>();
    return ready.compose(v -> {
      Future<String> f = Future.succeededFuture("");
      if (role.runsScheduler()) {
        scheduler = new SchedulerVerticle(config, metrics, clock, advertisedUrl());
        checks.put("scheduler.postgres", scheduler::ready);
        f = f.compose(x -> vertx.deployVerticle(scheduler));
      }
      if (role.runsWorker()) {
        worker = new WorkerVerticle(config, metrics, clock, topology, this::requestExit);
        WorkerVerticle w = worker;
        // the degraded write mode is no reason to be unready (the worker still commits): a detail, not a check
        checks.put("worker", new DetailedCheck(w::ready, () -> w.degraded() == null ? new JsonObject()
            : new JsonObject().put("degraded", w.degraded().json())));
        f = f.compose(x -> vertx.deployVerticle(worker));
      }
      if (role.runsProbe()) {
        probe = new ProbeVerticle(config, metrics, clock, topology);
        if (scheduler != null) {
          SchedulerVerticle own = scheduler;
          probe.pacingFrom(() -> own.view().pacing(own.minWorkers()));
          probe.slotMapFrom(() -> own.slotMaps().forProbes());
        }
        checks.put("probe", probe::ready);
        checks.put("probe.outbox", probe.outboxCheck());
        f = f.compose(x -> vertx.deployVerticle(probe));
      }
      return f;
    }).compose(x -> {
      http = scheduler == null ? new HttpApi(config, metrics, checks) : new HttpApi(config, metrics, checks, credentials, apiResources(scheduler),
          scheduler.audit());
      if (probe != null) http.withRoleRoutes(List.of(new IngestRoutes(config, probe::push, topology, metrics, clock)::mount));
      return vertx.deployVerticle(http);
    }).compose(x -> probe == null || config.getInt(Keys.PROBE_SIM_PUSH_ROOMS) == 0 ? Future.succeededFuture()
        : vertx.deployVerticle(pushSim = pushSimulator())).<Void>mapEmpty().onFailure(e -> {
      metrics.close();
      vertx.close();
    });
  }

  /**
   * Where this node is reached, for the leader_url it publishes while it leads: known once the HTTP
   * server listens (its port may be 0 = any). The host's name is looked up now, not on the event loop.
   */
  private Supplier<String> advertisedUrl() {
    String advertised = config.get(Keys.HTTP_ADVERTISED_URL);
    String bind = config.get(Keys.HTTP_HOST);
    String hostName = advertised.isBlank() && AdvertisedUrl.isWildcard(bind.trim()) ? AdvertisedUrl.localHostName() : bind;
    return () -> http == null ? "" : AdvertisedUrl.choose(advertised, HttpTls.scheme(config), bind, http.port(), () -> hostName);
  }

  /** Simulated hotel rooms pushing to this probe's own ingest endpoint, over loopback when it binds every address. */
  private PushSimulator pushSimulator() {
    String bind = config.get(Keys.HTTP_HOST);
    String host = bind.equals("0.0.0.0") || bind.equals("::") || bind.isBlank() ? "127.0.0.1" : bind;
    String token = config.get(Keys.PROBE_INGEST_TOKENS).split(",")[0].trim();
    return new PushSimulator(config.getInt(Keys.PROBE_SIM_PUSH_ROOMS), config.getLong(Keys.PROBE_SIM_PUSH_INTERVAL_MS),
        new PushSimulator.Target(HttpTls.scheme(config), host, http.port(), token), clock, metrics, new java.util.Random());
  }

  /** Netty's allocator event classes; their static initialisers register JFR event types (issue 14). */
  private static final List<String> NETTY_JFR_EVENTS = List.of("io.netty.buffer.AllocateChunkEvent", "io.netty.buffer.FreeChunkEvent",
      "io.netty.buffer.ReturnChunkEvent", "io.netty.buffer.AllocateBufferEvent", "io.netty.buffer.FreeBufferEvent",
      "io.netty.buffer.ReallocateBufferEvent");

  /**
   * The start-up stall behind issue 14's double election: Netty 4.2's adaptive allocator initialises these
   * event classes on its first chunk allocation, and their static initialisers register JFR event types
   * ({@code jdk.jfr.internal.MetadataRepository.register}), which took 2.5–3.5 s on the loaded test machine —
   * on an event loop (the first PostgreSQL connection's), and every other event loop allocating its first
   * chunk meanwhile waits for the same class initialisation. A leader elected in that window could miss
   * its lock ping and step down. Done here, on the starting thread, before any event loop runs.
   */
  private static void initNettyAllocatorEvents() {
    long start = System.nanoTime();
    for (String c : NETTY_JFR_EVENTS) {
      try {
        Class.forName(c, true, Node.class.getClassLoader());
      } catch (ClassNotFoundException | LinkageError e) {
        log.debug("netty allocator event {} not initialised here: {}", c, e.toString()); // another Netty version: nothing to do early
      }
    }
    log.debug("netty allocator event classes initialised in {} ms", (System.nanoTime() - start) / 1_000_000);
  }

  /** The API's resources: each gets the scheduler parts it reads, and the scheduler's {@link Operations} for what it changes. */
  private List<Routes> apiResources(SchedulerVerticle s) {
    Operations ops = s.operations();
    return List.of(
        new OverviewRoutes(s.view(), s.queues(), s::leading, () -> s.fleetMode().stored()),
        new FleetModeRoutes(s.fleetMode()),
        new WorkerRoutes(s.view(), ops),
        new SlotRoutes(s.devices(), s.view(), s.queues(), () -> Math.max(config.getInt(Keys.SLOTS_TOTAL), s.slotMaps().slotCount())),
        new SlotMapRoutes(s.slotMaps(), ops),
        new DeviceRoutes(s.devices(), s.state(), ops, config.getLong(Keys.PROBE_INTERVAL_MS), clock, TargetPolicy.from(config)),
        new AlertRoutes(s.state(), ops),
        new DeadLetterRoutes(s.deadLetters(), ops),
        new JobRoutes(s.jobs()),
        new ProbeRoutes(s.devices(), s.view(), s::probes, s.minWorkers()),
        new ShedRoutes(s.shed(), clock),
        new HotelRoutes(s.hotels()));
  }

  /**
   * Refuses a PostgreSQL superuser outside demo mode ({@link CredentialPolicy}), then applies the migrations
   * with a short-lived pool, retrying while PostgreSQL is not reachable.
   */
  private Future<Void> migrate() {
    PgOptions pg = PgOptions.from(config);
    Pool pool = Db.pool(vertx, pg, 1, "pg-start");
    // a migration that finds a conflicting schema (IllegalStateException) or a refused role is not fixed by waiting
    return new Retry(vertx, RetryPolicy.from(config), log).until("migrate schema " + pg.schema() + " on " + pg.where(),
        () -> CredentialPolicy.checkPostgres(pool, config).compose(v -> Migrations.apply(vertx, pool, pg, config.getInt(Keys.SLOTS_TOTAL), config.getBool(Keys.PG_MIGRATE))),
        e -> e instanceof IllegalStateException || e instanceof ConfigException, () -> false)
        .<Void>mapEmpty().eventually(pool::close);
  }

  private volatile Runnable onExit = () -> log.info("exit requested (no exit handler in this process)");
  private volatile boolean exitRequested;

  /** What to do when the worker was drained and told to leave (Main: exit the process, which stops gracefully). */
  public void onExitRequest(Runnable r) {
    this.onExit = r;
  }

  public boolean exitRequested() {
    return exitRequested;
  }

  private void requestExit() {
    if (exitRequested) return;
    exitRequested = true;
    onExit.run();
  }

  public HttpApi http() {
    return http;
  }

  public SchedulerVerticle scheduler() {
    return scheduler;
  }

  /** Undeploys every verticle (each stops gracefully, D6) and closes Vert.x. */
  public Future<Void> stop() {
    if (vertx == null) return Future.succeededFuture();
    metrics.close();
    return vertx.close();
  }

  public Config config() {
    return config;
  }

  public Metrics metrics() {
    return metrics;
  }

  public ProbeVerticle probe() {
    return probe;
  }

  /** The push simulator (probe.sim.push.rooms), or null. */
  public PushSimulator pushSim() {
    return pushSim;
  }

  public WorkerVerticle worker() {
    return worker;
  }

  public int httpPort() {
    return http == null ? -1 : http.port();
  }

  public Vertx vertx() {
    return vertx;
  }
}
