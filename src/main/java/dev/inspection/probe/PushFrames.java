package dev.inspection.probe;

import dev.inspection.messaging.Priority;
import dev.inspection.messaging.SlotHash;
import dev.inspection.outbox.CheckResult;
import dev.inspection.state.HotelRoomPayload;
import dev.inspection.state.PayloadProfiles;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Reads the body of a push ({@code POST /ingest/v1/{profile}}, issue 13): one frame (a JSON object) or a JSON array
 * of frames. Each frame is checked on its own, so a malformed one is refused with the field it names while the
 * others are taken. Pure: no I/O, the receive time and the slot count are given.
 *
 * <p>A taken frame becomes a {@link CheckResult} of its {@code device_id}, collected at the receive time (the
 * device's own time stays in the payload, where the device-time guard reads it), on the normal queue, whose
 * payload is the frame as sent plus {@code "payload_profile"}: the worker merges it with that profile when the
 * inventory does not list the device. Its {@code seq} is given by the outbox.
 *
 * <p>{@code hotel_room} (seed 004): {@code device_id}, {@code hotel_id}, {@code room_id}, {@code guid} and an
 * integer {@code ts_ms} are required; the rest is a 0x36 report or 0x0F command as {@link HotelRoomPayload} reads it.
 */
public final class PushFrames {
  /** Profiles a device may push frames of. */
  public static final Set<String> PROFILES = Set.of(PayloadProfiles.HOTEL_ROOM.name());
  static final int MAX_ID = 64;

  /** Frame {@code index} of the body, taken. */
  public record Taken(int index, CheckResult result) {}

  /** Frame {@code index} of the body, refused: {@code field} is what is wrong ({@code error} starts with it). */
  public record Refused(int index, String field, String error) {}

  /** {@code single}: the body was one frame, not an array. */
  public record Read(boolean single, List<Taken> taken, List<Refused> refused) {
    public int frames() {
      return taken.size() + refused.size();
    }
  }

  private PushFrames() {}

  /**
   * @throws IllegalArgumentException when the body as a whole cannot be read (not JSON, neither an object nor an
   *     array, an empty array, more than {@code maxFrames} frames, an unknown profile)
   */
  public static Read read(String body, String profile, Instant receivedAt, int totalSlots, int maxFrames) {
    if (!PROFILES.contains(profile)) {
      throw new IllegalArgumentException("unknown push profile '" + profile + "'; frames can be pushed for: " + String.join(", ", PROFILES));
    }
    Object parsed;
    try {
      parsed = Json.decodeValue(body);
    } catch (DecodeException e) {
      throw new IllegalArgumentException("the body is not JSON: send one frame (an object) or a JSON array of frames");
    }
    List<Object> frames = new ArrayList<>();
    boolean single = parsed instanceof JsonObject;
    if (single) frames.add(parsed);
    else if (parsed instanceof JsonArray a) a.forEach(frames::add);
    else throw new IllegalArgumentException("the body must be one frame (an object) or a JSON array of frames");
    if (frames.isEmpty()) throw new IllegalArgumentException("the array holds no frame");
    if (frames.size() > maxFrames) {
      throw new IllegalArgumentException("the array holds " + frames.size() + " frames, more than " + maxFrames + " (probe.ingest.max.frames): split it");
    }
    List<Taken> taken = new ArrayList<>();
    List<Refused> refused = new ArrayList<>();
    for (int i = 0; i < frames.size(); i++) {
      try {
        taken.add(new Taken(i, hotelFrame(frames.get(i), profile, receivedAt, totalSlots)));
      } catch (IllegalArgumentException bad) {
        String msg = bad.getMessage();
        int colon = msg.indexOf(':');
        refused.add(new Refused(i, colon > 0 ? msg.substring(0, colon) : "frame", msg));
      }
    }
    return new Read(single, taken, refused);
  }

  private static CheckResult hotelFrame(Object value, String profile, Instant receivedAt, int totalSlots) {
    if (!(value instanceof JsonObject frame)) throw new IllegalArgumentException("frame: must be a JSON object");
    String device = id(frame, "device_id", false);
    id(frame, "hotel_id", true);
    id(frame, "room_id", true);
    id(frame, "guid", false);
    Object ts = frame.getValue(HotelRoomPayload.TS_MS);
    if (ts == null) throw new IllegalArgumentException("ts_ms: missing (the device's time of the frame, epoch milliseconds)");
    BigDecimal n = ts instanceof Number ? new BigDecimal(ts.toString()) : null;
    if (n == null || n.signum() <= 0 || n.stripTrailingZeros().scale() > 0 || n.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
      throw new IllegalArgumentException("ts_ms: must be a positive integer (epoch milliseconds), got " + ts);
    }
    if (frame.encode().contains("\\u0000")) {
      throw new IllegalArgumentException("frame: holds a NUL character (\\u0000) in a string, which the database refuses");
    }
    HotelRoomPayload.normalize(frame); // the same check the worker makes: refused here, with the field, instead of dead-lettered there
    JsonObject payload = frame.copy().put(PayloadProfiles.PROFILE_FIELD, profile);
    return new CheckResult(device, SlotHash.slotOf(device, totalSlots), Priority.NORMAL, receivedAt, 0, 1, 1, payload, 2);
  }

  /** A required identifier: a string of 1..64 printable characters, or (when {@code numberToo}) a non-negative integer. */
  private static String id(JsonObject frame, String field, boolean numberToo) {
    Object v = frame.getValue(field);
    if (v == null) throw new IllegalArgumentException(field + ": missing");
    if (numberToo && (v instanceof Integer || v instanceof Long) && ((Number) v).longValue() >= 0) return v.toString();
    if (!(v instanceof String s) || s.isBlank() || s.length() > MAX_ID || !s.chars().allMatch(c -> c >= 0x20 && c != 0x7f)) {
      throw new IllegalArgumentException(field + ": must be a string of 1.." + MAX_ID + " printable characters"
          + (numberToo ? " or a non-negative integer" : ""));
    }
    return s;
  }
}
