package dev.inspection.probe;

import dev.inspection.control.FleetMode;
import dev.inspection.control.Pacing;
import java.util.ArrayList;
import java.util.List;

/**
 * The probe's side of backpressure (seed 000 §7.2, scenario F; D10), pure. {@link #inspect} decides
 * whether a due check runs; an instance is the probe's own mode, decided from what the probe sees itself:
 * broker nacks (a full queue refused a publish), no broker connection, its outbox's depth and oldest age,
 * and whether it still hears the scheduler. Up at once; down one step at a time, only when every signal is below half of its
 * entry threshold and the mode has lasted {@code minDwellMs}.
 */
public final class ProbeMode {

  /**
   * Whether a device of {@code priority} inspects at its {@code round} (its count of due checks) in
   * {@code mode}. NORMAL: every round. BACKPRESSURE_HIGH: critical every round, normal every other round
   * (half rate), low never. BACKPRESSURE_CRITICAL: critical only. Critical devices are never slowed.
   *
   * <p>{@code phase} ({@link #phase}, by device) decides which rounds a normal device skips at half rate. Devices that
   * started together count the same rounds at the same time: by the round alone the whole fleet inspected one interval
   * and skipped the next (the million-device bench: 16,700 results/s for a minute, then 800/s), so the pipeline was
   * flooded and idle by turns and its lag never fell far enough to leave the mode.
   */
  public static boolean inspect(FleetMode mode, int priority, long round, int phase) {
    if (priority <= Pacing.CRITICAL) return true;
    return switch (mode) {
      case NORMAL -> true;
      case BACKPRESSURE_HIGH -> priority == 2 && (round + phase) % 2 == 0;
      case BACKPRESSURE_CRITICAL -> false;
    };
  }

  /** A device's phase for {@link #inspect}: 0 or 1, from its id (stable across restarts), half of the devices each. */
  public static int phase(String deviceId) {
    int h = deviceId.hashCode() * 0x9E3779B9; // spread: ids that differ in their last character alone still split evenly
    return (h ^ (h >>> 16)) & 1;
  }

  /** Thresholds of the probe's own mode, all from configuration. */
  public record Settings(long depthHigh, long depthCritical, long ageHighMs, long ageCriticalMs, long nackWindowMs, long unreachableMs, long brokerDownMs, long minDwellMs) {}

  /**
   * What the probe sees at one moment.
   *
   * @param lastNackAtMs when the broker last refused a publish; -1 never
   * @param lastHeardAtMs when the fleet mode was last heard from the scheduler's API or Redis; -1 when the
   *     probe knows of no scheduler (never heard one, none configured): no "unreachable" signal then
   * @param brokerDownSinceMs since when the probe has had no broker connection; -1 while connected
   */
  public record Seen(long nowMs, long outboxDepth, long oldestAgeMs, long lastNackAtMs, long lastHeardAtMs, long brokerDownSinceMs) {}

  /** A change of the probe's own mode; {@code cause} is a short code for metrics. */
  public record Change(FleetMode from, FleetMode to, String reason, String cause) {}

  private final Settings settings;
  private FleetMode mode = FleetMode.NORMAL;
  private long sinceMs;

  public ProbeMode(Settings settings, long nowMs) {
    this.settings = settings;
    this.sinceMs = nowMs;
  }

  public FleetMode mode() {
    return mode;
  }

  /** One look: the change it causes, or null. */
  public Change step(Seen s) {
    List<String> critical = new ArrayList<>();
    if (s.outboxDepth() >= settings.depthCritical()) critical.add("outbox_depth: " + s.outboxDepth() + " unconfirmed rows >= " + settings.depthCritical());
    if (s.oldestAgeMs() >= settings.ageCriticalMs()) critical.add("outbox_age: oldest unconfirmed row " + s.oldestAgeMs() / 1000 + " s >= " + settings.ageCriticalMs() / 1000 + " s");
    List<String> high = new ArrayList<>();
    if (s.outboxDepth() >= settings.depthHigh()) high.add("outbox_depth: " + s.outboxDepth() + " unconfirmed rows >= " + settings.depthHigh());
    if (s.oldestAgeMs() >= settings.ageHighMs()) high.add("outbox_age: oldest unconfirmed row " + s.oldestAgeMs() / 1000 + " s >= " + settings.ageHighMs() / 1000 + " s");
    if (nackedRecently(s)) high.add("broker_nacks: the broker refused a publish (queue full) " + (s.nowMs() - s.lastNackAtMs()) / 1000 + " s ago");
    if (brokerDown(s)) high.add("broker_down: no connection to RabbitMQ for " + (s.nowMs() - s.brokerDownSinceMs()) / 1000 + " s");
    if (unreachable(s)) high.add("unreachable: no fleet mode from the scheduler (API or Redis) for " + (s.nowMs() - s.lastHeardAtMs()) / 1000 + " s");
    FleetMode wanted = !critical.isEmpty() ? FleetMode.BACKPRESSURE_CRITICAL : !high.isEmpty() ? FleetMode.BACKPRESSURE_HIGH : FleetMode.NORMAL;
    if (wanted.above(mode)) {
      List<String> causes = critical.isEmpty() ? high : critical;
      return move(wanted, String.join("; ", causes), causes.get(0).substring(0, causes.get(0).indexOf(':')), s.nowMs());
    }
    if (mode == FleetMode.NORMAL || s.nowMs() - sinceMs < settings.minDwellMs() || holding(s)) return null;
    return move(mode.stepDown(), "recovered: outbox " + s.outboxDepth() + " rows, oldest " + s.oldestAgeMs() / 1000 + " s, no recent nack, broker connected, scheduler heard",
        "recovered", s.nowMs());
  }

  private boolean nackedRecently(Seen s) {
    return s.lastNackAtMs() >= 0 && s.nowMs() - s.lastNackAtMs() < settings.nackWindowMs();
  }

  private boolean brokerDown(Seen s) {
    return s.brokerDownSinceMs() >= 0 && s.nowMs() - s.brokerDownSinceMs() >= settings.brokerDownMs();
  }

  private boolean unreachable(Seen s) {
    return s.lastHeardAtMs() >= 0 && s.nowMs() - s.lastHeardAtMs() >= settings.unreachableMs();
  }

  /** Whether a signal still holds the current mode: not yet below half of its entry threshold (the hysteresis band). */
  private boolean holding(Seen s) {
    boolean critical = mode == FleetMode.BACKPRESSURE_CRITICAL;
    long depth = critical ? settings.depthCritical() : settings.depthHigh();
    long age = critical ? settings.ageCriticalMs() : settings.ageHighMs();
    if (s.outboxDepth() >= depth / 2 || s.oldestAgeMs() >= age / 2) return true;
    return !critical && (nackedRecently(s) || unreachable(s) || brokerDown(s));
  }

  private Change move(FleetMode to, String reason, String cause, long nowMs) {
    FleetMode from = mode;
    FleetMode.TRANSITIONS.check(from, to);
    mode = to;
    sinceMs = nowMs;
    return new Change(from, to, reason, cause);
  }
}
