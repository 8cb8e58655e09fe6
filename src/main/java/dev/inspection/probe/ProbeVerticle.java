package dev.inspection.probe;

import dev.inspection.common.HealthCheck;
import dev.inspection.common.RetryPolicy;
import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import dev.inspection.control.FleetMode;
import dev.inspection.inventory.Device;
import dev.inspection.inventory.TargetPolicy;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.RabbitConnector;
import dev.inspection.messaging.RabbitOptions;
import dev.inspection.messaging.SlotHash;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import dev.inspection.outbox.AppendBuffer;
import dev.inspection.outbox.CheckResult;
import dev.inspection.outbox.Outbox;
import dev.inspection.outbox.OutboxGuard;
import dev.inspection.outbox.OutboxCleaner;
import dev.inspection.outbox.OutboxShed;
import dev.inspection.outbox.ShedReporter;
import dev.inspection.outbox.OutboxPublisher;
import dev.inspection.outbox.OutboxRow;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The probe role: inspects its devices on schedule, group-commits every result to the outbox, then
 * publishes it (INV-11). The probe never talks to PostgreSQL: its inventory is simulated, read from a
 * file, or pulled from the scheduler's API and cached on disk for when the scheduler is away.
 */
public final class ProbeVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(ProbeVerticle.class);
  private static final int MAX_BUFFERED = 50_000;
  /** Between two looks at the schedule ({@link #scheduleTick}); a look gathers up to GATHER_DEVICES due devices (probe.look.gather.ms). */
  static final long TICK_MIN_MS = 50;
  static final long TICK_MAX_MS = 1000;
  static final int GATHER_DEVICES = 64;

  private final Config config;
  private final Metrics metrics;
  private final Clock clock;
  private final String isNode;
  private final Topology topology;
  /** The schedule's jitter and the simulated checks', on this verticle's event loop only: no locked seed (java.util.Random's CAS took 3 % of a loaded node). */
  private final SplittableRandom random = new SplittableRandom();
  private final AtomicLong outboxDepth = new AtomicLong();
  private final AtomicLong outboxOldestAgeMs = new AtomicLong();
  /** Since when the probe has had no broker connection (from its start until the first connect); -1 while connected. */
  private final AtomicLong brokerDownSinceMs = new AtomicLong(-1);
  private ProbeSchedule schedule;
  private Checker checker;
  private Outbox outbox;
  private OutboxPublisher publisher;
  private OutboxShed shed;
  private OutboxCleaner cleaner;
  /** A clean of confirmed rows is under way (it deletes a chunk per transaction and may outlast its 60 s period). */
  private boolean cleaning;
  private OutboxGuard guard;
  private ShedReporter shedReporter;
  private RabbitConnector connector;
  private WebClient web;
  private final AppendBuffer buffer = new AppendBuffer();
  private boolean appending;
  private long flushTimer = -1;
  private long tickTimer = -1;
  private boolean stopping;
  /** The stop is closing the outbox: nothing more is written to it. */
  private boolean outboxClosing;
  /** Every periodic timer of this probe, cancelled first thing in {@link #stop()}. */
  private final List<Long> timers = new ArrayList<>();
  private long checksInFlight;
  /** Backpressure (issue 12): the fleet's mode, this probe's own, and the gate of the schedule. */
  private ProbeModeKeeper mode;
  /** Cold-start pacing (issue 14 item 2); {@code localPacing}: this process's own scheduler, when it runs one. */
  private PaceKeeper pacing;
  private Supplier<Future<JsonObject>> localPacing;
  private Supplier<Future<JsonObject>> localSlotMap;
  /** The slot map version results are stamped with and hashed by (issue 14 item 3). */
  private SlotMapStamp stamp;
  /** This group's plan version as the scheduler last served it (INV-2), stamped on every result; 1 until then. */
  private ProbeInventory inventory;

  public ProbeVerticle(Config config, Metrics metrics, Clock clock, Topology topology) {
    this.config = config;
    this.metrics = metrics;
    this.clock = clock;
    this.isNode = config.nodeId();
    this.topology = topology;
  }

  public boolean ready() {
    return outbox != null && publisher != null && publisher.connected();
  }

  /** Readiness of the outbox: its last append succeeded (else the reason). */
  public HealthCheck outboxCheck() {
    return new HealthCheck() {
      @Override
      public boolean getAsBoolean() {
        return guard == null || guard.getAsBoolean();
      }

      @Override
      public String reason() {
        return guard == null ? null : guard.reason();
      }
    };
  }

  public long outboxDepth() {
    return outboxDepth.get();
  }

  public String isNode() {
    return isNode;
  }

  public ProbeModeKeeper mode() {
    return mode;
  }

  /** In {@code --role=all}: read the cold-start pace from this process's own scheduler (set before deployment). */
  public void pacingFrom(Supplier<Future<JsonObject>> scheduler) {
    this.localPacing = scheduler;
  }

  /** In {@code --role=all}: follow the slot map of this process's own scheduler (a reshard's switch). */
  public void slotMapFrom(Supplier<Future<JsonObject>> scheduler) {
    this.localSlotMap = scheduler;
  }

  @Override
  public Future<?> start() {
    schedule = new ProbeSchedule(config.getInt(Keys.PROBE_JITTER_PCT), random);
    checker = new Checker(vertx, config.getLong(Keys.PROBE_CHECK_TIMEOUT_MS), config.getDouble(Keys.PROBE_SIM_FAIL_RATE), random,
        TargetPolicy.from(config), config.getInt(Keys.PROBE_HTTP_MAX_BODY_BYTES));
    web = WebClient.create(vertx);
    mode = new ProbeModeKeeper(vertx, config, metrics, clock, isNode, outboxDepth::get, outboxOldestAgeMs::get, brokerDownSinceMs::get, web);
    schedule.gate(mode::inspect);
    pacing = new PaceKeeper(vertx, config, isNode, schedule, web, localPacing);
    pacing.start();
    Path file = Path.of(config.get(Keys.DATA_DIR), "outbox-" + isNode.replaceAll("[^A-Za-z0-9._-]", "_") + ".db");
    metrics.probeGauges(outboxDepth::get, () -> outboxOldestAgeMs.get() / 1000.0, () -> schedule.size());
    // D11: a probe with another slots.total than the map in force would route every result to the wrong slot
    stamp = new SlotMapStamp(isNode, topology.totalSlots());
    String schedulerUrl = config.get(Keys.PROBE_INVENTORY_URL);
    Future<Void> checked = localSlotMap != null
        ? localSlotMap.get().map(m -> stamp.heard(m, "its own scheduler")).<Void>mapEmpty().otherwiseEmpty()
        : SlotMapCheck.check(web, schedulerUrl, config.get(Keys.PROBE_API_TOKEN), topology.totalSlots(), m -> stamp.heard(m, schedulerUrl));
    return checked
        .compose(v -> Outbox.open(vertx, file, isNode, topology, clock))
        .compose(o -> {
          outbox = o;
          shed = new OutboxShed(o, file);
          cleaner = new OutboxCleaner(o, clock);
          guard = new OutboxGuard(shed, cleaner, metrics, clock, OutboxGuard.limits(config));
          shedReporter = new ShedReporter(vertx, shed, topology, isNode);
          publisher = new OutboxPublisher(vertx, outbox, topology, metrics, clock, OutboxPublisher.Settings.from(config));
          connector = new RabbitConnector(vertx, RabbitOptions.from(config), RetryPolicy.from(config), "probe-" + isNode,
              c -> publisher.onConnected(c).compose(v -> shedReporter.onConnected(c)).onSuccess(v -> brokerDownSinceMs.set(-1)), () -> {
                brokerDownSinceMs.compareAndSet(-1, clock.millis());
                publisher.onLost();
                shedReporter.onLost();
              });
          brokerDownSinceMs.set(clock.millis());
          connector.start();
          inventory = new ProbeInventory(vertx, config, metrics, clock, schedule, web);
          return inventory.load();
        })
        .onSuccess(n -> {
          log.info("probe {} inspecting {} devices; outbox {}", isNode, schedule.size(), file.toAbsolutePath());
          stamp.start(vertx, web, localSlotMap, schedulerUrl, config.get(Keys.PROBE_API_TOKEN), config.getLong(Keys.PROBE_SLOT_MAP_REFRESH_MS));
          scheduleTick();
          mode.start();
          timers.add(vertx.setPeriodic(config.getLong(Keys.OUTBOX_REPLAY_INTERVAL_MS), t -> publisher.replay()));
          timers.add(vertx.setPeriodic(1000, t -> refreshStats()));
          timers.add(vertx.setPeriodic(config.getLong(Keys.OUTBOX_SHED_REPORT_MS), t -> shedReporter.report()));
          redis = Redis.createClient(vertx, new RedisOptions()
              .setConnectionString(config.get(Keys.REDIS_URL)).setMaxPoolSize(1).setMaxPoolWaiting(4));
          timers.add(vertx.setPeriodic(1000, 5000, t -> report()));
          timers.add(vertx.setPeriodic(60_000, t -> {
            if (cleaning) return; // the last clean is still deleting, a chunk at a time
            cleaning = true;
            cleaner.clean(config.getLong(Keys.OUTBOX_RETENTION_MS))
                .onSuccess(c -> { if (c > 0) log.debug("outbox cleaner removed {} confirmed rows", c); })
                .compose(c -> shed.clean(config.getLong(Keys.OUTBOX_RETENTION_MS), clock.millis()))
                .onComplete(ar -> cleaning = false);
          }));
          long refresh = config.getLong(Keys.PROBE_INVENTORY_REFRESH_MS);
          if (!config.get(Keys.PROBE_INVENTORY_URL).isBlank()) {
            timers.add(vertx.setPeriodic(refresh, t -> inventory.pull()));
          }
        });
  }

  public double pace() {
    return schedule.pace();
  }

  /** The next look: when due devices have gathered ({@link ProbeSchedule#lookInMs(long, long, long, long, int)}), 50 ms to 1 s from now. */
  private void scheduleTick() {
    if (stopping) return;
    long in = schedule.lookInMs(clock.millis(), TICK_MIN_MS, TICK_MAX_MS, config.getLong(Keys.PROBE_LOOK_GATHER_MS), GATHER_DEVICES);
    tickTimer = vertx.setTimer(in, t -> {
      tickTimer = -1;
      try {
        tick();
      } finally {
        scheduleTick(); // a look that threw must not end the inspections (the periodic timer before it went on too)
      }
    });
  }

  private void tick() {
    if (stopping) return;
    if (buffer.size() >= MAX_BUFFERED) {
      // the outbox cannot keep up: skip this round rather than hold unbounded results in memory
      metrics.registry().counter("probe_checks_skipped_total").increment();
      return;
    }
    // bounded concurrency: devices due beyond probe.checks.max.inflight stay due and go at a later tick
    int room = (int) Math.min(MAX_BUFFERED - buffer.size(), config.getInt(Keys.PROBE_CHECKS_MAX_INFLIGHT) - checksInFlight);
    if (room <= 0) return;
    List<Device> due = schedule.pollDue(clock.millis(), room);
    SlotMapStamp.Stamp map = stamp.current();
    for (Device d : due) {
      checksInFlight++;
      checker.check(d).onComplete(ar -> {
        checksInFlight--;
        metrics.probeChecked(d.priority());
        JsonObject payload = ar.succeeded() ? ar.result() : new JsonObject().put("status", "DOWN").put("error", String.valueOf(ar.cause()));
        buffer.add(new CheckResult(d.deviceId(), SlotHash.slotOf(d.deviceId(), map.slots()), Priority.ofDevicePriority(d.priority()),
            Instant.ofEpochMilli(clock.millis()), d.resourceVersion(), inventory.planVersion(), map.version(), payload, d.priority()));
        if (buffer.size() >= config.getInt(Keys.OUTBOX_COMMIT_MAX_ROWS)) flush();
        else flushSoon();
      });
    }
    // every check of this look has answered (simulated ones answer at once): nothing more is coming to wait the linger for
    if (checksInFlight == 0 && !buffer.isEmpty() && !appending) {
      if (flushTimer >= 0) vertx.cancelTimer(flushTimer);
      flushTimer = -1;
      flush();
    }
  }

  /**
   * The group commit's linger: a flush 20 ms after a result is buffered, one timer for all that arrive meanwhile (a
   * timer armed only when something waits: an idle probe's loop is not woken 50 times a second for nothing).
   */
  private void flushSoon() {
    if (flushTimer < 0) flushTimer = vertx.setTimer(20, t -> {
      flushTimer = -1;
      flush();
    });
  }

  /** Group commit: one SQLite transaction for everything buffered, one at a time. */
  private Future<Void> flush() {
    if (appending || buffer.isEmpty()) return Future.succeededFuture();
    if (outboxClosing) {
      // checks that finished after the stop's last write: never durable, never published; inspected again next start
      log.info("probe {}: {} results finished after the outbox closed; not written", isNode, buffer.size());
      buffer.clear();
      return Future.succeededFuture();
    }
    appending = true;
    int max = config.getInt(Keys.OUTBOX_COMMIT_MAX_ROWS);
    List<CheckResult> batch = buffer.take(max);
    return outbox.append(batch).onComplete(ar -> {
      appending = false;
      if (ar.succeeded()) {
        metrics.outboxAppended(batch.size());
        buffer.durable(batch, ar.result());
        guard.appendSucceeded();
        publisher.rowsAppended(ar.result());
        if (buffer.size() >= max) flush();
        else if (!buffer.isEmpty()) flushSoon(); // what arrived while this commit ran
      } else {
        // results that never reached the disk were never published either; the next round inspects again
        buffer.failed(batch, ar.cause());
        guard.appendFailed(batch, ar.cause());
        if (!buffer.isEmpty()) flushSoon();
      }
    }).mapEmpty();
  }

  /**
   * Frames pushed to this probe (issue 13): into the same group commit as polled results. The future completes
   * once every one is durable in the outbox, with its row (its seq given there), or fails: the probe is stopping,
   * holds too much already, or the commit failed. Callable from any context.
   */
  public Future<List<OutboxRow>> push(List<CheckResult> results) {
    Promise<List<OutboxRow>> all = Promise.promise();
    context.runOnContext(v -> {
      if (stopping || outboxClosing || outbox == null) {
        all.fail(new IllegalStateException("the probe is stopping: send the frames again later"));
        return;
      }
      if (buffer.size() + results.size() > MAX_BUFFERED) {
        all.fail(new IllegalStateException("the probe's outbox is behind (" + buffer.size() + " results wait): send the frames again later"));
        return;
      }
      List<Future<OutboxRow>> each = new ArrayList<>(results.size());
      for (CheckResult r : results) {
        Promise<OutboxRow> p = Promise.promise();
        each.add(p.future());
        buffer.add(stamp.stamped(r), p);
      }
      Future.all(each).onComplete(ar -> {
        if (ar.succeeded()) all.complete(each.stream().map(Future::result).toList());
        else all.fail(ar.cause());
      });
      flush();
    });
    return all.future();
  }

  private Redis redis;

  /** For the operators' probe list: outbox depth and age, devices, pace — best effort through Redis. */
  private void report() {
    if (stopping || redis == null) return;
    JsonObject r = new JsonObject().put("probe_id", isNode).put("group", config.get(Keys.PROBE_GROUP)).put("outbox_depth", outboxDepth.get())
        .put("oldest_age_s", outboxOldestAgeMs.get() / 1000.0).put("devices", schedule.size()).put("pace", schedule.pace()).put("at", clock.millis())
        .put("mode", mode.effective().name()).put("fleet_mode", mode.fleet().name()).put("local_mode", mode.local().name());
    redis.send(Request.cmd(Command.HSET).arg(config.get(Keys.REDIS_CHANNEL_PREFIX) + ":probes")
        .arg(isNode).arg(r.encode())).onFailure(e -> log.debug("probe report to Redis failed: {}", e.getMessage()));
  }

  private void refreshStats() {
    // behind (a backpressure mode): results wait in the slot queues anyway, so slots gather larger messages
    if (!stopping) publisher.gather(mode.effective() != FleetMode.NORMAL);
    outbox.stats().onSuccess(s -> {
      outboxDepth.set(s.depth());
      outboxOldestAgeMs.set(s.depth() == 0 ? 0 : clock.millis() - s.oldestCreatedAtMs());
      if (!stopping) guard.check(s.depth(), publisher.inFlightRowIds());
    });
  }

  /** D6: stop inspecting, write what is buffered, give in-flight publishes a moment, close the outbox. */
  @Override
  public Future<?> stop() {
    stopping = true;
    timers.forEach(vertx::cancelTimer); // nothing periodic may reach the outbox while it closes
    if (tickTimer >= 0) vertx.cancelTimer(tickTimer);
    if (mode != null) mode.stop();
    if (pacing != null) pacing.stop();
    if (stamp != null) stamp.stop(vertx);
    if (redis != null) redis.close();
    // each step is bounded: whatever is not confirmed in time stays in the outbox and is replayed next start
    return drainBuffer()
        .compose(v -> publisher == null ? Future.succeededFuture() : publisher.stop().timeout(5, TimeUnit.SECONDS).recover(e -> Future.succeededFuture()))
        .compose(v -> shedReporter == null ? Future.succeededFuture() : shedReporter.close().timeout(5, TimeUnit.SECONDS).recover(e -> Future.succeededFuture()))
        .compose(v -> connector == null ? Future.succeededFuture() : connector.stop().timeout(5, TimeUnit.SECONDS).recover(e -> Future.succeededFuture()))
        .compose(v -> {
          outboxClosing = true;
          return outbox == null ? Future.succeededFuture() : outbox.closeAsync();
        })
        .onComplete(ar -> {
          if (checker != null) checker.close(); // icmp: after the outbox, so no check in flight is written as DOWN
          log.info("probe {} stopped; {} rows left unconfirmed in the outbox for the next start", isNode, outboxDepth.get());
        });
  }

  private Future<Void> drainBuffer() {
    if (buffer.isEmpty() && !appending) return Future.succeededFuture();
    Promise<Void> p = Promise.promise();
    long deadline = clock.millis() + 5000;
    vertx.setPeriodic(10, t -> {
      if ((buffer.isEmpty() && !appending) || clock.millis() > deadline) {
        vertx.cancelTimer(t);
        p.tryComplete();
      } else {
        flush();
      }
    });
    return p.future();
  }
}
