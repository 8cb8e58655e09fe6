package dev.inspection.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * A latency published twice: as before, {@code name_seconds{quantile="0.5"|"0.99"}} computed on this node (the
 * drill and bench scripts read them), and as {@code name_histogram_seconds_bucket{le}} with fixed buckets, which
 * unlike percentiles add up across nodes ({@code histogram_quantile(0.99, sum by (le) (rate(x_bucket[5m])))}).
 * Prometheus' registry drops the quantiles of a timer that also has buckets, hence two meters. The buckets are
 * the same on every node and every release, so series from a rolling upgrade still add up.
 */
public final class Latency {
  /** From a commit that takes 5 ms to a lag of two minutes: the range the alerts and dashboard care about. */
  static final Duration[] LATENCY = {
    Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100),
    Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5),
    Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(60), Duration.ofSeconds(120)
  };

  private final Timer percentiles;
  private final Timer histogram;

  /** {@code tags} (the builder's tags and the like) apply to both meters. */
  Latency(MeterRegistry registry, String name, String description, Duration expiry, UnaryOperator<Timer.Builder> tags) {
    percentiles = tags.apply(Timer.builder(name).description(description + " (p50/p99 on this node)").publishPercentiles(0.5, 0.99)
        .distributionStatisticExpiry(expiry)).register(registry);
    histogram = tags.apply(histogramBuilder(name + "_histogram", description + " (buckets: aggregate across nodes)")).register(registry);
  }

  /** A histogram-only timer builder with the latency buckets. */
  static Timer.Builder histogramBuilder(String name, String description) {
    return Timer.builder(name).description(description).serviceLevelObjectives(LATENCY);
  }

  void record(long amount, TimeUnit unit) {
    percentiles.record(amount, unit);
    histogram.record(amount, unit);
  }

  /** The per-node meter (for a percentile read by the node itself). */
  Timer percentiles() {
    return percentiles;
  }
}
