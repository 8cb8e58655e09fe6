package dev.inspection.scheduler;

import dev.inspection.control.FleetMode;
import java.util.ArrayList;
import java.util.List;

/**
 * The fleet's mode as the leader decides it (seed 000 §7.2, scenario F; D10), a pure state machine fed one
 * {@link FleetSignals} per queue sample.
 *
 * <p>Up at once: a signal at or above a mode's entry threshold moves the fleet to that mode at the sample
 * that shows it (HIGH: backlog, backlog growth sustained for {@code growthSamples} samples, a share of the
 * workers failing commits sustained for {@code failingSamples} samples, commit p99; CRITICAL: backlog or commit p99). Down slowly, one step at a time:
 * only when every signal of the current mode is below {@code leaveRatio} × its entry threshold (the
 * hysteresis band) and the mode has lasted {@code minDwellMs} (the dwell), so a backlog that hovers
 * around a threshold cannot make the probes flap. An unknown signal (no sample, broker away) neither
 * raises nor holds a mode.
 */
public final class FleetModeMachine {

  /**
   * Thresholds, all from configuration.
   *
   * @param failingPct share of live workers failing commits (0..100) that enters HIGH when it holds for {@code failingSamples} samples
   * @param leaveRatio a mode is left only below this fraction of its entry thresholds (0 < r < 1)
   * @param minDwellMs least time in a mode before stepping down from it
   */
  public record Settings(long backlogHigh, long backlogCritical, double growthHighPerSec, int growthSamples, double failingPct, int failingSamples,
      double commitP99HighMs, double commitP99CriticalMs, double leaveRatio, long minDwellMs) {}

  /**
   * A change of mode.
   *
   * @param cause short code for metrics: backlog, growth, failing_workers, commit_latency, recovered
   */
  public record Change(FleetMode from, FleetMode to, String reason, String cause, long atMs) {}

  private final Settings settings;
  private FleetMode mode = FleetMode.NORMAL;
  private long sinceMs;
  private String reason = "start";
  private int growthStreak;
  private int failingStreak;

  public FleetModeMachine(Settings settings, long nowMs) {
    this.settings = settings;
    this.sinceMs = nowMs;
  }

  /** Continues from a stored mode (a new leader picks up where the last one stopped). */
  public void restore(FleetMode stored, String why, long storedSinceMs) {
    mode = stored;
    reason = why;
    sinceMs = storedSinceMs;
    growthStreak = 0;
    failingStreak = 0;
  }

  public FleetMode mode() {
    return mode;
  }

  public long sinceMs() {
    return sinceMs;
  }

  public String reason() {
    return reason;
  }

  /** One sample: the change it causes, or null. */
  public Change step(FleetSignals s, long nowMs) {
    growthStreak = !Double.isNaN(s.growthPerSec()) && s.growthPerSec() >= settings.growthHighPerSec() ? growthStreak + 1 : 0;
    // one worker's one failed batch is not an outage: the share must hold over consecutive samples
    failingStreak = s.failingWorkers() > 0 && s.failingPct() >= settings.failingPct() ? failingStreak + 1 : 0;
    List<String> critical = criticalCauses(s);
    List<String> high = critical.isEmpty() ? highCauses(s) : List.of();
    FleetMode wanted = !critical.isEmpty() ? FleetMode.BACKPRESSURE_CRITICAL : !high.isEmpty() ? FleetMode.BACKPRESSURE_HIGH : FleetMode.NORMAL;
    if (wanted.above(mode)) {
      List<String> causes = critical.isEmpty() ? high : critical;
      return move(wanted, String.join("; ", causes), code(causes.get(0)), nowMs);
    }
    if (mode == FleetMode.NORMAL || nowMs - sinceMs < settings.minDwellMs()) return null;
    List<String> holding = holding(s);
    if (!holding.isEmpty()) return null;
    return move(mode.stepDown(), "recovered: " + calm(s), "recovered", nowMs);
  }

  private Change move(FleetMode to, String why, String cause, long nowMs) {
    FleetMode from = mode;
    FleetMode.TRANSITIONS.check(from, to);
    mode = to;
    sinceMs = nowMs;
    reason = why;
    return new Change(from, to, why, cause, nowMs);
  }

  private List<String> criticalCauses(FleetSignals s) {
    List<String> c = new ArrayList<>();
    if (s.backlog() >= 0 && s.backlog() >= settings.backlogCritical()) c.add("backlog: " + s.backlog() + " messages >= " + settings.backlogCritical());
    if (s.commitP99Ms() >= settings.commitP99CriticalMs()) c.add("commit_latency: p99 " + Math.round(s.commitP99Ms()) + " ms >= " + Math.round(settings.commitP99CriticalMs()));
    return c;
  }

  private List<String> highCauses(FleetSignals s) {
    List<String> c = new ArrayList<>();
    if (s.backlog() >= 0 && s.backlog() >= settings.backlogHigh()) c.add("backlog: " + s.backlog() + " messages >= " + settings.backlogHigh());
    if (growthStreak >= settings.growthSamples()) {
      c.add("growth: backlog growing " + Math.round(s.growthPerSec()) + "/s >= " + Math.round(settings.growthHighPerSec()) + "/s for " + growthStreak + " samples");
    }
    if (failingStreak >= settings.failingSamples()) {
      c.add("failing_workers: " + s.failingWorkers() + " of " + s.liveWorkers() + " workers failing commits (>= " + Math.round(settings.failingPct()) + " %) for " + failingStreak + " samples");
    }
    if (s.commitP99Ms() >= settings.commitP99HighMs()) c.add("commit_latency: p99 " + Math.round(s.commitP99Ms()) + " ms >= " + Math.round(settings.commitP99HighMs()));
    return c;
  }

  /** The signals that keep the current mode: those not yet below leaveRatio × its entry thresholds. */
  private List<String> holding(FleetSignals s) {
    double r = settings.leaveRatio();
    List<String> h = new ArrayList<>();
    boolean critical = mode == FleetMode.BACKPRESSURE_CRITICAL;
    long backlogEntry = critical ? settings.backlogCritical() : settings.backlogHigh();
    double p99Entry = critical ? settings.commitP99CriticalMs() : settings.commitP99HighMs();
    if (s.backlog() >= 0 && s.backlog() >= backlogEntry * r) h.add("backlog");
    if (s.commitP99Ms() >= p99Entry * r) h.add("commit_latency");
    if (!critical) {
      if (!Double.isNaN(s.growthPerSec()) && s.growthPerSec() >= settings.growthHighPerSec() * r) h.add("growth");
      if (s.failingWorkers() > 0 && s.failingPct() >= settings.failingPct() * r) h.add("failing_workers");
    }
    return h;
  }

  private static String calm(FleetSignals s) {
    return "backlog " + s.backlog() + (Double.isNaN(s.growthPerSec()) ? "" : ", growth " + Math.round(s.growthPerSec()) + "/s") + ", "
        + s.failingWorkers() + " of " + s.liveWorkers() + " workers failing" + (s.commitP99Ms() >= 0 ? ", commit p99 " + Math.round(s.commitP99Ms()) + " ms" : "");
  }

  private static String code(String cause) {
    return cause.substring(0, cause.indexOf(':'));
  }
}
