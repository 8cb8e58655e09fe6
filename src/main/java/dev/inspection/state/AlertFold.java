package dev.inspection.state;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Derives {@code alert_current} from {@code alert_event} (seed 000 §3.3): the events are the source of truth
 * and the current state is a deterministic function of them, so the order in which the worker happened to
 * insert them does not matter. That is what fixes §3.3's lost alert: a FIRING (cycle 10, seq 100) delivered
 * through the high queue after a newer result (cycle 11, seq 101) from the normal queue still counts, because
 * the events are sorted by when they happened before they are folded.
 *
 * <p>Order: event_time, then cycle_id, then seq (the table's UNIQUE key makes (cycle_id, seq) distinct within one
 * (device, alert_key)); for inputs that break that (duplicates not yet removed), type, severity and payload
 * complete the order so that the answer never depends on the input's order. Fold: a FIRING or UPDATED while
 * not active starts a new active period (first_fired_at = its time, severity = its severity); while active it
 * raises the period's severity to the maximum; a RESOLVED ends the period. The latest event decides the state:
 * ACTIVE if the latest FIRING/UPDATED has no later RESOLVED, RESOLVED otherwise. A RESOLVED state reports the
 * period it closed (its first_fired_at and max severity); a RESOLVED with no FIRING/UPDATED before it (older
 * events cut off by a time-bounded query) is its own period: first_fired_at = its time, severity = its own.
 */
public final class AlertFold {
  private static final Map<String, Integer> TYPE_RANK = Map.of(AlertEvent.FIRING, 0, AlertEvent.UPDATED, 1, AlertEvent.RESOLVED, 2);

  /** Total order of events; the first three keys are the design's, the rest only break ties between duplicates. */
  public static final Comparator<AlertEvent> ORDER = Comparator.comparing(AlertEvent::eventTime)
      .thenComparingLong(AlertEvent::cycleId)
      .thenComparingLong(AlertEvent::seq)
      .thenComparing(e -> TYPE_RANK.get(e.type()))
      .thenComparingInt(AlertEvent::severity)
      .thenComparing(e -> e.payload().encode());

  private AlertFold() {}

  /**
   * The current state of one (device, alert_key) from its events, in any order; empty when there are none.
   * Events of different devices or keys are refused.
   */
  public static Optional<AlertCurrent> current(List<AlertEvent> eventsOfOneKey) {
    if (eventsOfOneKey == null || eventsOfOneKey.isEmpty()) return Optional.empty();
    List<AlertEvent> events = new ArrayList<>(eventsOfOneKey);
    AlertEvent any = events.get(0);
    for (AlertEvent e : events) {
      if (!e.deviceId().equals(any.deviceId()) || !e.alertKey().equals(any.alertKey())) {
        throw new IllegalArgumentException("events of one (device, alert_key) expected, got (" + any.deviceId() + ", "
            + any.alertKey() + ") and (" + e.deviceId() + ", " + e.alertKey() + ")");
      }
    }
    events.sort(ORDER);

    boolean active = false;
    int severity = 0;
    Instant firstFiredAt = null;
    for (AlertEvent e : events) {
      if (AlertEvent.RESOLVED.equals(e.type())) {
        if (firstFiredAt == null) {
          firstFiredAt = e.eventTime();
          severity = e.severity();
        }
        active = false;
      } else if (!active) {
        active = true;
        firstFiredAt = e.eventTime();
        severity = e.severity();
      } else {
        severity = Math.max(severity, e.severity());
      }
    }
    AlertEvent last = events.get(events.size() - 1);
    return Optional.of(new AlertCurrent(any.deviceId(), any.alertKey(), active ? AlertCurrent.ACTIVE : AlertCurrent.RESOLVED,
        severity, firstFiredAt, last.eventTime(), last.payload()));
  }
}
