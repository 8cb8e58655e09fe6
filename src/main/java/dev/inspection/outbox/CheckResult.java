package dev.inspection.outbox;

import dev.inspection.messaging.Priority;
import io.vertx.core.json.JsonObject;
import java.time.Instant;

/**
 * One inspection result before it has a sequence number. {@code devicePriority} is the inventory's 1
 * (critical), 2 (normal) or 3 (low): the queue only knows high and normal, the outbox sheds by all three.
 */
public record CheckResult(String deviceId, int slot, Priority priority, Instant collectedAt, long resourceVersion,
    long planVersion, long slotMapVersion, JsonObject payload, int devicePriority) {

  /** A result whose device priority is its queue's (1 for high, 2 for normal). */
  public CheckResult(String deviceId, int slot, Priority priority, Instant collectedAt, long resourceVersion,
      long planVersion, long slotMapVersion, JsonObject payload) {
    this(deviceId, slot, priority, collectedAt, resourceVersion, planVersion, slotMapVersion, payload, priority == Priority.HIGH ? 1 : 2);
  }
}
