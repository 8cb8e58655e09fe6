package dev.inspection.outbox;

import dev.inspection.messaging.Priority;
import io.vertx.core.json.JsonObject;
import java.time.Instant;

/** One inspection result before it has a sequence number. */
public record CheckResult(String deviceId, int slot, Priority priority, Instant collectedAt, long resourceVersion,
    long planVersion, long slotMapVersion, JsonObject payload) {
}
