package dev.inspection.state;

import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.Objects;

/**
 * One row of {@code alert_current}: the state of one (device, alert_key) derived from its events
 * ({@link AlertFold}; INV-18: never updated on its own).
 *
 * @param state ACTIVE or RESOLVED
 * @param severity the highest severity of the latest active period
 * @param firstFiredAt when the latest active period began
 * @param lastEventAt event time of the latest event
 * @param payload the latest event's payload
 */
public record AlertCurrent(String deviceId, String alertKey, String state, int severity, Instant firstFiredAt, Instant lastEventAt,
    JsonObject payload) {
  public static final String ACTIVE = "ACTIVE";
  public static final String RESOLVED = "RESOLVED";

  public AlertCurrent {
    Objects.requireNonNull(deviceId, "deviceId");
    Objects.requireNonNull(alertKey, "alertKey");
    Objects.requireNonNull(firstFiredAt, "firstFiredAt");
    Objects.requireNonNull(lastEventAt, "lastEventAt");
    if (!ACTIVE.equals(state) && !RESOLVED.equals(state)) throw new IllegalArgumentException("state must be ACTIVE or RESOLVED, got " + state);
    payload = payload == null ? new JsonObject() : payload.copy();
  }

  public boolean active() {
    return ACTIVE.equals(state);
  }

  @Override
  public JsonObject payload() {
    return payload.copy();
  }
}
