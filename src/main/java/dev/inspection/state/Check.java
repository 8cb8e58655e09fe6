package dev.inspection.state;

import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.Objects;

/**
 * One check result of one device, as the worker folds it.
 *
 * @param cycleId with {@code seq}, the result's place in its device's order (INV-5)
 * @param collectedAt when the probe collected it; becomes the event time of the alerts it raises
 * @param up the payload's {@code status}
 */
public record Check(String deviceId, long cycleId, long seq, Instant collectedAt, boolean up, JsonObject payload) {
  public Check {
    Objects.requireNonNull(deviceId, "deviceId");
    Objects.requireNonNull(collectedAt, "collectedAt");
    payload = payload == null ? new JsonObject() : payload.copy();
  }

  /** A check whose UP/DOWN is read from the payload's {@code status}; an unknown status is refused. */
  public static Check fromPayload(String deviceId, long cycleId, long seq, Instant collectedAt, JsonObject payload) {
    Objects.requireNonNull(payload, "payload");
    Object s = payload.getValue("status");
    boolean up = CheckStatus.parse(s instanceof String str ? str : null) == CheckStatus.UP;
    return new Check(deviceId, cycleId, seq, collectedAt, up, payload);
  }

  public DerivedState.Position position() {
    return new DerivedState.Position(cycleId, seq);
  }

  public CheckStatus status() {
    return CheckStatus.of(up);
  }

  @Override
  public JsonObject payload() {
    return payload.copy();
  }
}
