package dev.inspection.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Per-slot gauges whose set of slots changes (a scheduler samples every slot's queues; a worker holds some
 * slots and loses them), and the dead-letter queue's depth: each {@code set} replaces the whole set, so a slot that moved away leaves no stale series.
 */
public final class SlotGauges {
  private final MultiGauge backlog;
  private final MultiGauge lag;
  private final AtomicLong deadLetters = new AtomicLong(-1);
  private final MeterRegistry registry;

  SlotGauges(MeterRegistry registry) {
    backlog = MultiGauge.builder("queue_backlog_messages")
        .description("messages ready in a slot's queue per priority, as this scheduler last sampled them (every scheduler samples; take max across nodes)")
        .register(registry);
    lag = MultiGauge.builder("worker_slot_lag_seconds")
        .description("per slot this worker holds: collected_at to commit of the oldest result in its newest batch")
        .register(registry);
    this.registry = registry;
  }

  /** Messages in the dead-letter queue at the last sample; the gauge exists from the first sample on (schedulers only). */
  public void deadLetters(long n) {
    if (deadLetters.getAndSet(n) == -1) {
      Gauge.builder("dead_letter_queue_messages", deadLetters, AtomicLong::get)
          .description("dead letters waiting in the dead-letter queue for an operator (console: Dead letters), as this scheduler last sampled it")
          .register(registry);
    }
  }

  /** The last queue sample: slot -> priority wire name ("high", "normal", "low") -> messages ready. */
  public void backlog(Map<Integer, Map<String, Long>> sample) {
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    sample.forEach((slot, perPriority) -> perPriority.forEach((priority, n) ->
        rows.add(MultiGauge.Row.of(Tags.of("slot", Integer.toString(slot), "priority", priority), n))));
    backlog.register(rows, true);
  }

  /** The slots this worker holds now, each with its last lag in ms. */
  public void lag(Map<Integer, Long> lagMsBySlot) {
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    lagMsBySlot.forEach((slot, ms) -> rows.add(MultiGauge.Row.of(Tags.of("slot", Integer.toString(slot)), ms / 1000.0)));
    lag.register(rows, true);
  }
}
