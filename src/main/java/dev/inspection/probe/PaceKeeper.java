package dev.inspection.probe;

import dev.inspection.common.RetryPolicy;
import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import dev.inspection.coordination.Notifier;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cold-start pace of a probe (seed 000 §4.4 A, issue 14 item 2) as I/O around {@link ProbeSchedule#pace}.
 * A probe starts at {@code probe.pacing.start} (the cold-start pace, a quarter) — not at full speed — and
 * follows what a scheduler says from then on, wherever it can reach one: its own scheduler in the same
 * process ({@code --role=all}), the scheduler at {@code probe.inventory.url}, and the leader's announcement on
 * Redis ({@code {prefix}:pacing}), which reaches probes that have no URL. A scheduler that cannot be reached
 * leaves the last pace in force.
 */
final class PaceKeeper {
  private static final Logger log = LoggerFactory.getLogger(PaceKeeper.class);

  private final Vertx vertx;
  private final Config config;
  private final String probeId;
  private final ProbeSchedule schedule;
  private final WebClient web;
  private final Supplier<Future<JsonObject>> local;
  private Notifier redis;
  private long timer = -1;

  /** {@code local}: the pacing of this process's own scheduler, or null when the process runs none. */
  PaceKeeper(Vertx vertx, Config config, String probeId, ProbeSchedule schedule, WebClient web, Supplier<Future<JsonObject>> local) {
    this.vertx = vertx;
    this.config = config;
    this.probeId = probeId;
    this.schedule = schedule;
    this.web = web;
    this.local = local;
  }

  /** The pace a probe starts at, checked: 0 < pace <= 1. */
  static double startPace(Config config) {
    double p = config.getDouble(Keys.PROBE_PACING_START);
    if (!(p > 0 && p <= 1)) throw new IllegalArgumentException("probe.pacing.start must be > 0 and <= 1, was " + p);
    return p;
  }

  void start() {
    schedule.pace(startPace(config));
    log.info("probe {}: inspection pace of non-critical devices starts at {}% until a scheduler says otherwise", probeId,
        Math.round(schedule.pace() * 100));
    String url = config.get(Keys.PROBE_INVENTORY_URL).replaceAll("/+$", "");
    long every = config.getLong(Keys.PROBE_PACING_REFRESH_MS);
    if (local != null) {
      timer = vertx.setPeriodic(0, every, t -> local.get().onSuccess(p -> heard(p, "its own scheduler"))
          .onFailure(e -> log.debug("cannot read the pacing of this node's scheduler: {}", e.getMessage())));
    } else if (!url.isBlank()) {
      timer = vertx.setPeriodic(0, every, t -> pull(url));
    }
    redis = new Notifier(vertx, config.get(Keys.REDIS_URL), config.get(Keys.REDIS_CHANNEL_PREFIX), "pacing", RetryPolicy.from(config), msg -> {
      try {
        heard(new JsonObject(msg), "redis");
      } catch (RuntimeException e) {
        log.debug("ignored a malformed pacing message: {}", e.getMessage());
      }
    });
    redis.start();
  }

  void stop() {
    if (timer >= 0) vertx.cancelTimer(timer);
    if (redis != null) redis.stop();
  }

  private void pull(String base) {
    web.getAbs(base + "/api/v1/probe/pacing").bearerTokenAuthentication(config.get(Keys.PROBE_API_TOKEN)).timeout(5_000).send().onSuccess(resp -> {
      if (resp.statusCode() == 200) heard(resp.bodyAsJsonObject(), "api");
    }).onFailure(e -> log.debug("cannot read the pacing: {}", e.getMessage()));
  }

  private void heard(JsonObject p, String via) {
    double f = p.getDouble("factor", -1.0);
    if (!(f > 0 && f <= 1) || f == schedule.pace()) return;
    log.info("probe {}: inspection pace of non-critical devices now {}% ({} ACTIVE worker(s), full speed from {}; heard via {})", probeId,
        Math.round(f * 100), p.getInteger("active_workers"), p.getInteger("min_workers"), via);
    schedule.pace(f);
  }
}
