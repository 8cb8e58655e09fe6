package dev.inspection.worker;

import dev.inspection.metrics.Metrics;
import dev.inspection.worker.DegradedMode.Change;
import dev.inspection.worker.DegradedMode.Mode;
import dev.inspection.worker.DegradedMode.Status;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds this worker's commits into its {@link DegradedMode} and acts on a change: logs it with the reason, sets the
 * {@code worker_degraded} gauge, tells the listeners (the back-filler). Evaluated after every commit and every
 * {@code worker.degraded.tick.ms}. Runs on the worker's event loop; {@link #status} may be read from any thread.
 */
public final class DegradedMonitor {
  private static final Logger log = LoggerFactory.getLogger(DegradedMonitor.class);

  private final DegradedMode mode;
  private final Clock clock;
  private final Metrics metrics;
  private final String workerId;
  private final BooleanSupplier databaseAnswers;
  /** Commits in flight: token → start (epoch ms). */
  private final TreeMap<Long, Long> inFlight = new TreeMap<>();
  private final List<Consumer<Change>> listeners = new ArrayList<>();
  private long nextToken;
  private volatile Status status;
  private long timer = -1;

  /** {@code databaseAnswers}: false while the worker waits for PostgreSQL after an outage ({@link DbGate#healthy}). */
  public DegradedMonitor(DegradedMode.Settings settings, Clock clock, Metrics metrics, String workerId, BooleanSupplier databaseAnswers) {
    this.mode = new DegradedMode(settings, clock.millis());
    this.databaseAnswers = databaseAnswers;
    this.clock = clock;
    this.metrics = metrics;
    this.workerId = workerId;
    this.status = mode.status();
    metrics.degradedGauge(() -> status.mode() == Mode.DEGRADED ? 1 : 0);
  }

  /** Starts the periodic evaluation. */
  public DegradedMonitor start(Vertx vertx, long tickMs) {
    timer = vertx.setPeriodic(tickMs, t -> evaluate());
    return this;
  }

  public void stop(Vertx vertx) {
    if (timer >= 0) vertx.cancelTimer(timer);
  }

  public void onChange(Consumer<Change> listener) {
    listeners.add(listener);
  }

  public boolean degraded() {
    return status.mode() == Mode.DEGRADED;
  }

  public Status status() {
    return status;
  }

  /** For health details and the heartbeat: mode, reason, since. */
  public JsonObject json() {
    Status s = status;
    return new JsonObject().put("mode", s.mode().name()).put("reason", s.reason()).put("since", Instant.ofEpochMilli(s.since()).toString());
  }

  /** A commit starts; the token goes back to {@link #finished}. */
  long started() {
    long token = nextToken++;
    inFlight.put(token, clock.millis());
    return token;
  }

  void finished(long token, boolean ok) {
    Long start = inFlight.remove(token);
    long now = clock.millis();
    if (start != null) mode.commit(now, now - start, ok);
    evaluate();
  }

  /** How long the oldest commit still in flight has run at {@code now} (epoch ms); 0 when none is. */
  long oldestInFlightMs(long now) {
    return inFlight.isEmpty() ? 0 : now - inFlight.firstEntry().getValue();
  }

  private void evaluate() {
    long now = clock.millis();
    long oldest = oldestInFlightMs(now);
    mode.evaluate(now, oldest, databaseAnswers.getAsBoolean()).ifPresent(c -> {
      long lasted = c.at() - status.since();
      status = mode.status();
      metrics.degradedChange(c.to().name());
      if (c.to() == Mode.DEGRADED) {
        log.warn("worker {}: DB-degraded write mode entered: {}; writing current status, derived state, alerts and critical history only, "
            + "spilling the other history rows to the back-fill queue", workerId, c.reason());
      } else {
        log.info("worker {}: DB-degraded write mode left after {} ms: {}; full writes again, back-filling the spill", workerId, lasted, c.reason());
      }
      listeners.forEach(l -> l.accept(c));
    });
  }
}
