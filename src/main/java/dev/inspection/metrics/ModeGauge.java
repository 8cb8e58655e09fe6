package dev.inspection.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/** See {@link Metrics#modeGauge}. Thread-safe: the scrape reads what the owner sets. */
public final class ModeGauge {
  private final MeterRegistry registry;
  private final String name;
  private final String description;
  private final String[] tags;
  private final Set<String> registered = ConcurrentHashMap.newKeySet();
  private final AtomicReference<String> current = new AtomicReference<>("");
  private final AtomicInteger level = new AtomicInteger();

  ModeGauge(MeterRegistry registry, String name, String description, String[] tags) {
    this.registry = registry;
    this.name = name;
    this.description = description;
    this.tags = tags;
    Gauge.builder(name + "_level", level::get).description(description + " (severity: 0 NORMAL, 1 BACKPRESSURE_HIGH, 2 BACKPRESSURE_CRITICAL)")
        .tags(tags).register(registry);
  }

  public void set(String mode, int severity, String cause) {
    String key = mode + "|" + cause;
    current.set(key);
    level.set(severity);
    if (registered.add(key)) {
      Gauge.builder(name, () -> current.get().equals(key) ? 1 : 0).description(description).tags(tags).tag("mode", mode).tag("cause", cause)
          .register(registry);
    }
  }
}

