package dev.inspection.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.vertx.core.Vertx;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import java.util.concurrent.TimeUnit;

/**
 * The meters every node has whatever its role: the JVM (Micrometer's binders), Vert.x' own (its worker pools,
 * the PostgreSQL pool, the HTTP server, through vertx-micrometer-metrics) and the event-loop delay.
 */
public final class NodeMeters implements AutoCloseable {
  /** How often the event-loop delay is sampled. */
  static final long PROBE_EVERY_MS = 500;
  private final JvmGcMetrics gc = new JvmGcMetrics();
  private final Timer loopDelay;
  private Vertx vertx;
  private volatile long timer = -1;
  private volatile boolean closed;

  NodeMeters(MeterRegistry registry) {
    new ClassLoaderMetrics().bindTo(registry);
    new JvmMemoryMetrics().bindTo(registry);
    gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
    loopDelay = Latency.histogramBuilder("vertx_event_loop_delay",
        "how late a timer on an event loop fired (sampled every " + PROBE_EVERY_MS + " ms): a blocked or saturated event loop shows here").register(registry);
  }

  /** A Vert.x builder whose metrics go to this node's registry (several nodes in one JVM keep theirs apart). */
  static VertxBuilder vertxBuilder(MeterRegistry registry, VertxOptions options) {
    options.setMetricsOptions(new MicrometerMetricsOptions().setEnabled(true));
    return Vertx.builder().with(options).withMetrics(new MicrometerMetricsFactory(registry));
  }

  /** Starts sampling the event-loop delay on one of this Vert.x' event loops: a one-shot timer, armed again each time it fires. */
  void watch(Vertx v) {
    vertx = v;
    arm();
  }

  private void arm() {
    long due = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PROBE_EVERY_MS);
    timer = vertx.setTimer(PROBE_EVERY_MS, id -> {
      loopDelay.record(Math.max(0, System.nanoTime() - due), TimeUnit.NANOSECONDS);
      if (!closed) arm();
    });
  }

  @Override
  public void close() {
    closed = true;
    gc.close();
    if (vertx != null && timer >= 0) vertx.cancelTimer(timer);
  }
}
