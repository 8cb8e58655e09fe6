package dev.inspection.probe;

import dev.inspection.common.RetryPolicy;
import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import dev.inspection.control.FleetMode;
import dev.inspection.coordination.Notifier;
import dev.inspection.metrics.Metrics;
import dev.inspection.metrics.ModeGauge;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import java.time.Clock;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The probe's modes as I/O around {@link ProbeMode} (issue 12 item 3, D10): hears the fleet mode from the
 * scheduler's API (the authority, polled every {@code probe.mode.poll.ms}) and from Redis (changes at once,
 * and the leader's announcement every sample), decides its own mode every second from what it sees, and
 * lets a due check through by the more severe of the two ({@link #inspect}). Every change is logged with
 * its reason and shown as {@code probe_mode{source}}.
 */
public final class ProbeModeKeeper {
  private static final Logger log = LoggerFactory.getLogger(ProbeModeKeeper.class);

  private final Vertx vertx;
  private final Config config;
  private final Metrics metrics;
  private final Clock clock;
  private final String probeId;
  private final LongSupplier outboxDepth;
  private final LongSupplier oldestAgeMs;
  private final LongSupplier brokerDownSinceMs;
  private final WebClient web;
  private final ProbeMode own;
  private final ModeGauge fleetGauge;
  private final ModeGauge ownGauge;
  private final ModeGauge effectiveGauge;
  private Notifier redis;
  private long pollTimer = -1;
  private long lookTimer = -1;
  private volatile FleetMode fleet = FleetMode.NORMAL;
  private volatile FleetMode effective = FleetMode.NORMAL;
  private String fleetReason = "";
  /** -1 while the probe knows of no scheduler (none configured, none heard): no "unreachable" signal then. */
  private long lastHeardAtMs = -1;
  /**
   * Checks skipped by the mode since the last look, by priority (0: any other): added to {@code probe_mode_skipped_total} once a second
   * rather than with each check. An overloaded probe skips thousands a second, and the counter's own increment was 1.3-1.8 % of the
   * event loops' samples in capacity runs' flight recordings. The schedule and the looks run on the probe verticle's event loop.
   */
  private final long[] skipped = new long[4];

  public ProbeModeKeeper(Vertx vertx, Config config, Metrics metrics, Clock clock, String probeId, LongSupplier outboxDepth, LongSupplier oldestAgeMs,
      LongSupplier brokerDownSinceMs, WebClient web) {
    this.vertx = vertx;
    this.config = config;
    this.metrics = metrics;
    this.clock = clock;
    this.probeId = probeId;
    this.outboxDepth = outboxDepth;
    this.oldestAgeMs = oldestAgeMs;
    this.brokerDownSinceMs = brokerDownSinceMs;
    this.web = web;
    this.own = new ProbeMode(new ProbeMode.Settings(config.getLong(Keys.PROBE_MODE_OUTBOX_DEPTH_HIGH), config.getLong(Keys.PROBE_MODE_OUTBOX_DEPTH_CRITICAL),
        config.getLong(Keys.PROBE_MODE_OUTBOX_AGE_HIGH_MS), config.getLong(Keys.PROBE_MODE_OUTBOX_AGE_CRITICAL_MS), config.getLong(Keys.PROBE_MODE_NACK_WINDOW_MS),
        config.getLong(Keys.PROBE_MODE_UNREACHABLE_MS), config.getLong(Keys.PROBE_MODE_BROKER_DOWN_MS), config.getLong(Keys.PROBE_MODE_MIN_DWELL_MS)), clock.millis());
    String what = "this probe's inspection mode with the cause of its last change: fleet (heard from the scheduler), local (its own), effective (the more severe)";
    fleetGauge = metrics.modeGauge("probe_mode", what, "source", "fleet");
    ownGauge = metrics.modeGauge("probe_mode", what, "source", "local");
    effectiveGauge = metrics.modeGauge("probe_mode", what, "source", "effective");
    for (ModeGauge g : new ModeGauge[] {fleetGauge, ownGauge, effectiveGauge}) g.set(FleetMode.NORMAL.name(), 0, "start");
  }

  public void start() {
    String url = config.get(Keys.PROBE_INVENTORY_URL).replaceAll("/+$", "");
    // a configured scheduler counts as known from the start: it gets probe.mode.unreachable.ms to answer
    if (!url.isBlank()) {
      lastHeardAtMs = clock.millis();
      pollTimer = vertx.setPeriodic(0, config.getLong(Keys.PROBE_MODE_POLL_MS), t -> poll(url));
    }
    redis = new Notifier(vertx, config.get(Keys.REDIS_URL), config.get(Keys.REDIS_CHANNEL_PREFIX), "fleet-mode", RetryPolicy.from(config),
        msg -> heard(msg, "redis"));
    redis.start();
    lookTimer = vertx.setPeriodic(1000, t -> look());
  }

  public void stop() {
    if (pollTimer >= 0) vertx.cancelTimer(pollTimer);
    if (lookTimer >= 0) vertx.cancelTimer(lookTimer);
    if (redis != null) redis.stop();
    countSkipped();
  }

  /** The schedule's gate: whether a due check of a device of {@code priority} and {@link ProbeMode#phase} runs in the effective mode. */
  public boolean inspect(int priority, long round, int phase) {
    boolean go = ProbeMode.inspect(effective, priority, round, phase);
    if (!go) skipped[priority >= 1 && priority <= 3 ? priority : 0]++;
    return go;
  }

  public FleetMode fleet() {
    return fleet;
  }

  public FleetMode local() {
    return own.mode();
  }

  public FleetMode effective() {
    return effective;
  }

  private void poll(String base) {
    web.getAbs(base + "/api/v1/probe/fleet-mode").bearerTokenAuthentication(config.get(Keys.PROBE_API_TOKEN)).timeout(5_000).send().onSuccess(resp -> {
      if (resp.statusCode() == 200) heard(resp.bodyAsString(), "api");
      else log.debug("fleet mode from {}: HTTP {}", base, resp.statusCode());
    }).onFailure(e -> log.debug("cannot read the fleet mode from {}: {}", base, e.getMessage()));
  }

  private void heard(String message, String via) {
    JsonObject m;
    try {
      m = new JsonObject(message);
    } catch (RuntimeException e) {
      log.debug("ignored a malformed fleet mode message: {}", e.getMessage());
      return;
    }
    FleetMode mode = FleetMode.parse(m.getString("mode"), null);
    if (mode == null) return;
    lastHeardAtMs = clock.millis();
    String reason = m.getString("reason", "");
    if (mode != fleet) {
      log.info("probe {}: fleet mode {} -> {} (heard via {}; the scheduler's reason: {})", probeId, fleet, mode, via, reason);
      metrics.modeChanged("probe_mode_changes_total", mode.name(), cause(reason), "source", "fleet");
      fleet = mode;
      fleetReason = reason;
      fleetGauge.set(mode.name(), mode.level(), cause(reason));
      settle();
    } else if (!reason.equals(fleetReason)) {
      fleetReason = reason;
      fleetGauge.set(mode.name(), mode.level(), cause(reason));
    }
  }

  /** Once a second: the probe's own mode from what it sees. */
  private void look() {
    countSkipped();
    long now = clock.millis();
    // the refused publish's own time: a look that stamped it with its own time held the mode while any publish was refused
    // between two looks, whatever probe.mode.nack.window.ms said
    ProbeMode.Change c = own.step(new ProbeMode.Seen(now, outboxDepth.getAsLong(), oldestAgeMs.getAsLong(), metrics.lastNackAtMs(), lastHeardAtMs,
        brokerDownSinceMs.getAsLong()));
    if (c != null) {
      log.info("probe {}: own mode {} -> {} ({})", probeId, c.from(), c.to(), c.reason());
      metrics.modeChanged("probe_mode_changes_total", c.to().name(), c.cause(), "source", "local");
      ownGauge.set(c.to().name(), c.to().level(), c.cause());
      settle();
    }
  }

  private void countSkipped() {
    for (int p = 0; p < skipped.length; p++) {
      if (skipped[p] == 0) continue;
      metrics.inspectionsSkipped(p, skipped[p]);
      skipped[p] = 0;
    }
  }

  private void settle() {
    FleetMode e = FleetMode.max(fleet, own.mode());
    if (e == effective) return;
    String source = e == own.mode() && own.mode() != fleet ? "local" : "fleet";
    log.info("probe {}: inspecting in mode {} (fleet {}, own {}): {}", probeId, e, fleet, own.mode(), switch (e) {
      case NORMAL -> "every device at its rate";
      case BACKPRESSURE_HIGH -> "normal devices at half rate, low ones paused, critical ones unchanged";
      case BACKPRESSURE_CRITICAL -> "critical devices only";
    });
    effective = e;
    effectiveGauge.set(e.name(), e.level(), source);
  }

  private static String cause(String reason) {
    int colon = reason.indexOf(':');
    if (colon > 0) return reason.substring(0, colon);
    return reason.isBlank() ? "none" : reason.split(" ")[0];
  }
}
