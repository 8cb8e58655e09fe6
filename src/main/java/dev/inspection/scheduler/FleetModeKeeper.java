package dev.inspection.scheduler;

import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import dev.inspection.control.FleetMode;
import dev.inspection.control.WorkerState;
import dev.inspection.coordination.Notifier;
import dev.inspection.metrics.Metrics;
import dev.inspection.metrics.ModeGauge;
import dev.inspection.scheduler.ControlStore.WorkerRow;
import dev.inspection.scheduler.FleetModeMachine.Change;
import dev.inspection.store.Rows;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fleet mode's I/O (issue 12 item 3, D10), around the pure {@link FleetModeMachine}. On the leader, at
 * every new queue sample: reads the workers' heartbeats, steps the machine, stores a change in
 * {@code fleet_mode} (fenced by the term: the authority) with its history, then announces the stored mode on
 * Redis ({@code {prefix}:fleet-mode}) at every sample, so probes hear a change at once and hear silence
 * when no leader decides. On every scheduler the stored row is what the API serves. A change the database
 * did not take is written again at the next sample; a deposed leader drops what it had not stored.
 */
public final class FleetModeKeeper {
  private static final Logger log = LoggerFactory.getLogger(FleetModeKeeper.class);

  static final String READ = "SELECT mode, reason, since, term, (extract(epoch FROM since) * 1000)::bigint FROM fleet_mode WHERE id = 1";
  static final String WRITE = "UPDATE fleet_mode SET mode = $1, reason = $2, since = now(), term = $3 WHERE id = 1";
  static final String LOG = "INSERT INTO fleet_mode_history (old_mode, new_mode, reason, term) VALUES ($1, $2, $3, $4)";
  static final String RECENT = "SELECT old_mode, new_mode, reason, term, at FROM fleet_mode_history ORDER BY id DESC LIMIT $1";

  private final Vertx vertx;
  private final Pool pool;
  private final ControlStore store;
  private final QueueSampler queues;
  private final Leadership leadership;
  private final Notifier notifier;
  private final ModeGauge gauge;
  private final Metrics metrics;
  private final Clock clock;
  private final FleetModeMachine.Settings settings;
  private final long sampleMs;
  private FleetModeMachine machine;
  private long machineTerm = -1;
  private FleetSignals.Sample previous;
  private long lastStepAt;
  private long lastSampledAt;
  /** When (this clock) the queue sampler's last new sample was first seen: a sampler that stops (broker away) goes stale. */
  private long sampleSeenAt;
  private boolean busy;
  private Change pending;
  private long timer = -1;
  private volatile FleetSignals lastSignals;
  private volatile JsonObject stored = new JsonObject().put("mode", FleetMode.NORMAL.name()).put("reason", "not read yet");

  public FleetModeKeeper(Vertx vertx, Pool pool, ControlStore store, QueueSampler queues, Leadership leadership, Notifier notifier, Metrics metrics,
      Clock clock, FleetModeMachine.Settings settings, long sampleMs) {
    this.vertx = vertx;
    this.pool = pool;
    this.store = store;
    this.queues = queues;
    this.leadership = leadership;
    this.notifier = notifier;
    this.metrics = metrics;
    this.clock = clock;
    this.settings = settings;
    this.sampleMs = sampleMs;
    this.gauge = metrics.modeGauge("fleet_mode", "the fleet mode stored by the leader, as this scheduler last read or wrote it, with the cause of its last change");
    gauge.set(FleetMode.NORMAL.name(), 0, "start");
  }

  public static FleetModeMachine.Settings settings(Config c) {
    return new FleetModeMachine.Settings(c.getLong(Keys.SCHEDULER_FLEET_BACKLOG_HIGH), c.getLong(Keys.SCHEDULER_FLEET_BACKLOG_CRITICAL),
        c.getDouble(Keys.SCHEDULER_FLEET_GROWTH_PER_S), c.getInt(Keys.SCHEDULER_FLEET_GROWTH_SAMPLES), c.getDouble(Keys.SCHEDULER_FLEET_FAILING_WORKERS_PCT),
        c.getInt(Keys.SCHEDULER_FLEET_FAILING_SAMPLES),
        c.getDouble(Keys.SCHEDULER_FLEET_COMMIT_P99_HIGH_MS), c.getDouble(Keys.SCHEDULER_FLEET_COMMIT_P99_CRITICAL_MS), c.getDouble(Keys.SCHEDULER_FLEET_LEAVE_RATIO),
        c.getLong(Keys.SCHEDULER_FLEET_MIN_DWELL_MS));
  }

  public void start() {
    // a fraction of the sample period, so a new queue sample is acted on soon after it lands
    timer = vertx.setPeriodic(Math.max(100, Math.min(1000, sampleMs / 4)), t -> tick());
  }

  public void stop() {
    if (timer >= 0) vertx.cancelTimer(timer);
  }

  /** The stored mode as this scheduler last read or wrote it: {@code mode, reason, since, term}. */
  public JsonObject stored() {
    return stored.copy();
  }

  /** The authority: the row in the database now, with the last changes and, on the leader, the signals of its last sample. */
  public Future<JsonObject> read(int history) {
    return pool.query(READ).execute().compose(rows -> {
      JsonObject m = row(rows.iterator().next());
      return pool.preparedQuery(RECENT).execute(Tuple.of(history)).map(hist -> {
        JsonArray h = new JsonArray();
        for (Row r : hist) {
          h.add(new JsonObject().put("from", r.getString(0)).put("to", r.getString(1)).put("reason", r.getString(2)).put("term", r.getLong(3))
              .put("at", Rows.iso(r, 4)));
        }
        FleetSignals s = lastSignals;
        if (s != null && leadership.leading()) m.put("signals", signals(s));
        return m.put("history", h);
      });
    });
  }

  /** For probes: only the mode, its reason, since when and under which term. */
  public Future<JsonObject> readForProbe() {
    return pool.query(READ).execute().map(rows -> row(rows.iterator().next()));
  }

  private static JsonObject row(Row r) {
    return new JsonObject().put("mode", r.getString(0)).put("reason", r.getString(1)).put("since", Rows.iso(r, 2)).put("term", r.getLong(3))
        .put("since_ms", r.getLong(4));
  }

  private static JsonObject signals(FleetSignals s) {
    return new JsonObject().put("backlog", s.backlog()).put("growth_per_s", Double.isNaN(s.growthPerSec()) ? null : Math.round(s.growthPerSec()))
        .put("failing_workers", s.failingWorkers()).put("live_workers", s.liveWorkers()).put("commit_p99_ms", Math.round(s.commitP99Ms()));
  }

  private void tick() {
    if (busy) return;
    busy = true;
    // bounded: a query that never answers must not stop every later sample
    Future<?> round = (leadership.leading() ? lead() : follow()).timeout(3 * sampleMs + 5000, TimeUnit.MILLISECONDS);
    round.onComplete(ar -> {
      busy = false;
      if (ar.failed()) log.warn("fleet mode round failed: {}", ar.cause().getMessage());
    });
  }

  /** A follower only keeps its view of the stored row (and its gauge) fresh, once per sample period. */
  private Future<?> follow() {
    machine = null;
    pending = null;
    previous = null;
    long now = clock.millis();
    if (now - lastStepAt < sampleMs) return Future.succeededFuture();
    lastStepAt = now;
    return readForProbe().onSuccess(this::remember);
  }

  private Future<?> lead() {
    long term = leadership.term();
    if (machine == null || machineTerm != term) {
      // a new leader continues from the stored mode and its since, so a dwell is not restarted by an election
      return readForProbe().onSuccess(m -> {
        FleetModeMachine fresh = new FleetModeMachine(settings, clock.millis());
        fresh.restore(FleetMode.parse(m.getString("mode"), FleetMode.NORMAL), m.getString("reason"), m.getLong("since_ms"));
        machine = fresh;
        machineTerm = term;
        previous = null;
        pending = null;
        remember(m);
      });
    }
    long now = clock.millis();
    long sampledAt = queues.sampledAt(); // the sampler's wall clock: compared only with itself
    if (sampledAt != lastSampledAt) {
      lastSampledAt = sampledAt;
      sampleSeenAt = now;
    }
    boolean fresh = sampledAt > 0 && now - sampleSeenAt <= 3 * sampleMs;
    boolean newSample = fresh && (previous == null || sampledAt != previous.atMs());
    if (!newSample && !(now - lastStepAt >= sampleMs && !fresh)) return store(term);
    return store.workers().compose(workers -> {
      Map<String, Long> errors = new HashMap<>();
      Map<String, Double> p99 = new HashMap<>();
      for (WorkerRow w : workers) {
        if (w.state() != WorkerState.ACTIVE && w.state() != WorkerState.DRAINING) continue;
        errors.put(w.id(), w.metrics().getLong("db_errors", 0L));
        double p = w.metrics().getDouble("commit_p99_ms", -1.0);
        if (p >= 0) p99.put(w.id(), p);
      }
      FleetSignals.Sample sample = new FleetSignals.Sample(fresh ? sampledAt : now, fresh ? queues.total() : -1, errors, p99);
      FleetSignals signals = FleetSignals.between(previous, sample);
      previous = sample;
      lastStepAt = now;
      lastSignals = signals;
      Change c = machine.step(signals, now);
      if (c != null) {
        log.info("fleet mode {} -> {} ({})", c.from(), c.to(), c.reason());
        metrics.modeChanged("fleet_mode_changes_total", c.to().name(), c.cause());
        pending = c;
      }
      return store(term);
    });
  }

  /** Writes a pending change (fenced), then announces the stored mode on Redis. */
  private Future<?> store(long term) {
    Change c = pending;
    if (c == null) {
      announce();
      return Future.succeededFuture();
    }
    return leadership.fenced(conn -> conn.preparedQuery(WRITE).execute(Tuple.of(c.to().name(), c.reason(), term))
        .compose(r -> conn.preparedQuery(LOG).execute(Tuple.of(c.from().name(), c.to().name(), c.reason(), term))))
        .compose(r -> readForProbe())
        .onSuccess(m -> {
          if (pending == c) pending = null;
          remember(m);
          announce();
        })
        .onFailure(e -> log.warn("cannot store the fleet mode {} ({}); trying again at the next sample", c.to(), e.getMessage()));
  }

  private void remember(JsonObject m) {
    FleetMode mode = FleetMode.parse(m.getString("mode"), FleetMode.NORMAL);
    String reason = m.getString("reason", "");
    int colon = reason.indexOf(':');
    gauge.set(mode.name(), mode.level(), colon > 0 ? reason.substring(0, colon) : reason.isBlank() ? "none" : reason.split(" ")[0]);
    stored = m;
  }

  private void announce() {
    if (!leadership.leading() || pending != null) return;
    notifier.publish(stored.copy().put("at", clock.millis()).encode());
  }
}
