package dev.inspection.scheduler;

import java.util.Map;

/**
 * What the leader measured at one queue sample, reduced to the four signals the fleet mode is decided on
 * (seed 000 §4.4 F: "all workers fail their DB writes", "the RabbitMQ backlog rises"). Pure.
 *
 * @param backlog messages ready in every slot queue; -1 when unknown (no sample yet, broker away)
 * @param growthPerSec change of the backlog since the previous sample, per second; NaN when unknown
 * @param failingWorkers live workers whose database error count rose since the previous sample
 * @param liveWorkers workers that consume (ACTIVE or DRAINING) at this sample
 * @param commitP99Ms the worst commit p99 the live workers report; -1 when none reports one
 */
public record FleetSignals(long backlog, double growthPerSec, int failingWorkers, int liveWorkers, double commitP99Ms) {

  /**
   * One raw sample.
   *
   * @param atMs when the queues were sampled
   * @param backlog total ready messages, -1 when unknown
   * @param dbErrors each live worker's cumulative database error count (its heartbeat's {@code db_errors})
   * @param commitP99Ms each live worker's commit p99 in ms (its heartbeat's {@code commit_p99_ms})
   */
  public record Sample(long atMs, long backlog, Map<String, Long> dbErrors, Map<String, Double> commitP99Ms) {}

  /** The signals of {@code current}, with growth and failing workers measured against {@code previous} (null for the first). */
  public static FleetSignals between(Sample previous, Sample current) {
    double growth = Double.NaN;
    if (previous != null && previous.backlog() >= 0 && current.backlog() >= 0 && current.atMs() > previous.atMs()) {
      growth = (current.backlog() - previous.backlog()) * 1000.0 / (current.atMs() - previous.atMs());
    }
    int failing = 0;
    if (previous != null) {
      for (Map.Entry<String, Long> e : current.dbErrors().entrySet()) {
        Long before = previous.dbErrors().get(e.getKey());
        if (before != null && e.getValue() > before) failing++;
      }
    }
    double p99 = -1;
    for (double v : current.commitP99Ms().values()) p99 = Math.max(p99, v);
    return new FleetSignals(current.backlog(), growth, failing, current.dbErrors().size(), p99);
  }

  /** Share of live workers failing commits, 0..100; 0 with no live worker. */
  public double failingPct() {
    return liveWorkers == 0 ? 0 : failingWorkers * 100.0 / liveWorkers;
  }
}
