package dev.inspection.inventory;

import io.vertx.core.json.JsonObject;
import java.util.Set;

/** One device of the inventory (DESIGN.md §3): what to check, how often, and how urgent it is. */
public record Device(String deviceId, int priority, String probeGroup, String checkType, JsonObject checkSpec,
    long intervalMs, String payloadProfile, long resourceVersion) {

  public static final Set<String> CHECK_TYPES = Set.of("sim", "tcp", "http", "icmp");

  /**
   * Reads a device from its JSON form, checking every field; the message of the exception names the
   * field and what is allowed.
   */
  public static Device fromJson(JsonObject j, String defaultGroup, long defaultIntervalMs) {
    Object id = j.getValue("device_id");
    if (!(id instanceof String s) || s.isBlank() || s.length() > 64) {
      throw new IllegalArgumentException("device_id must be a string of 1..64 characters");
    }
    Object p = j.getValue("priority", 2);
    if (!(p instanceof Number n) || n.intValue() < 1 || n.intValue() > 3) {
      throw new IllegalArgumentException("priority must be 1 (critical), 2 (normal) or 3 (low)");
    }
    Object ct = j.getValue("check_type", "sim");
    if (!(ct instanceof String type) || !CHECK_TYPES.contains(type)) {
      throw new IllegalArgumentException("check_type must be one of " + CHECK_TYPES);
    }
    Object spec = j.getValue("check_spec", new JsonObject());
    if (!(spec instanceof JsonObject specObj)) throw new IllegalArgumentException("check_spec must be a JSON object");
    CheckSpec.validate(type, specObj);
    Object iv = j.getValue("interval_ms", defaultIntervalMs);
    if (!(iv instanceof Number ivn) || ivn.longValue() < 100) throw new IllegalArgumentException("interval_ms must be a number >= 100");
    Object group = j.getValue("probe_group", defaultGroup);
    if (!(group instanceof String g) || g.isBlank()) throw new IllegalArgumentException("probe_group must be a non-empty string");
    return new Device(s, n.intValue(), g, type, specObj, ivn.longValue(), j.getString("payload_profile", "default"),
        j.getLong("resource_version", 0L));
  }

  public JsonObject toJson() {
    return new JsonObject().put("device_id", deviceId).put("priority", priority).put("probe_group", probeGroup)
        .put("check_type", checkType).put("check_spec", checkSpec).put("interval_ms", intervalMs)
        .put("payload_profile", payloadProfile).put("resource_version", resourceVersion);
  }
}
