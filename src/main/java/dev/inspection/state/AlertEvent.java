package dev.inspection.state;

import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.Objects;
import java.util.Set;

/**
 * One row of {@code alert_event} (seed 000 §3.3), the append-only source of truth of alerts. Its
 * {@link #uniqueKey()} is the table's UNIQUE (device_id, alert_key, cycle_id, seq): the (cycle_id, seq) come
 * from the check that raised the event, so a replayed check raises a row the table already holds and the
 * insert is ignored (DESIGN D4).
 *
 * @param type FIRING, UPDATED or RESOLVED
 * @param severity 0..4 = INFO, WARN, MINOR, MAJOR, CRITICAL
 * @param eventTime the raising check's collected_at
 */
public record AlertEvent(String deviceId, String alertKey, String type, int severity, Instant eventTime, long cycleId, long seq,
    JsonObject payload) {
  public static final String FIRING = "FIRING";
  public static final String UPDATED = "UPDATED";
  public static final String RESOLVED = "RESOLVED";
  private static final Set<String> TYPES = Set.of(FIRING, UPDATED, RESOLVED);

  /** The columns of alert_event's UNIQUE constraint. */
  public record Key(String deviceId, String alertKey, long cycleId, long seq) {}

  public AlertEvent {
    Objects.requireNonNull(deviceId, "deviceId");
    Objects.requireNonNull(alertKey, "alertKey");
    Objects.requireNonNull(eventTime, "eventTime");
    if (!TYPES.contains(type)) throw new IllegalArgumentException("alert event type must be FIRING, UPDATED or RESOLVED, got " + type);
    if (severity < 0 || severity > 4) throw new IllegalArgumentException("severity must be 0..4, got " + severity);
    payload = payload == null ? new JsonObject() : payload.copy();
  }

  public Key uniqueKey() {
    return new Key(deviceId, alertKey, cycleId, seq);
  }

  @Override
  public JsonObject payload() {
    return payload.copy();
  }
}
