package dev.inspection.state;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiFunction;
import java.util.stream.Collectors;

/** The built-in payload profiles, by the name stored in {@code device_resource.payload_profile}. */
public final class PayloadProfiles {
  /** Full-state payloads: each field an update carries replaces the stored one (seed 000's "newest wins"). */
  public static final PayloadProfile DEFAULT = new PayloadProfile("default", Map.of(), MergeRule.REPLACE);

  /**
   * Hotel room control (seed 004), for payloads built by {@link HotelRoomPayload#normalize}: loops merge by
   * their 9-digit key, the fault list is replaced whole, the lock status is only overwritten by a value and the
   * timestamp only moves forward; a frame whose {@code ts_ms} is older than the stored one changes nothing
   * ({@link PayloadProfile#older}).
   */
  public static final PayloadProfile HOTEL_ROOM = new PayloadProfile("hotel_room", Map.of(
      HotelRoomPayload.DEV_LOOPS, MergeRule.MERGE,
      HotelRoomPayload.FAULTS, MergeRule.REPLACE,
      HotelRoomPayload.SYS_LOCK_STATUS, MergeRule.COALESCE,
      HotelRoomPayload.TS_MS, MergeRule.MAX), MergeRule.REPLACE, HotelRoomPayload::normalize, HotelRoomPayload.TS_MS);

  /**
   * The field of a pushed frame's payload that names its profile (issue 13): the worker merges a device the inventory
   * does not list with it.
   */
  public static final String PROFILE_FIELD = "payload_profile";

  private static final List<PayloadProfile> ALL = List.of(DEFAULT, HOTEL_ROOM);

  private PayloadProfiles() {}

  public static List<PayloadProfile> all() {
    return ALL;
  }

  /**
   * A configuration's per-profile list, {@code profile=value[,profile=value]} (empty: none), each profile one of
   * {@link #all()} and named once; {@code value} reads one value (throwing an IllegalArgumentException that names it).
   * A part without {@code =} is refused showing {@code shape} and {@code example} (e.g. {@code profile=policy},
   * {@code hotel_room=changes}).
   */
  public static <T> Map<String, T> perProfile(String spec, String shape, String example, BiFunction<String, String, T> value) {
    Map<String, T> by = new TreeMap<>();
    for (String part : spec.split(",")) {
      if (part.isBlank()) continue;
      int eq = part.indexOf('=');
      if (eq < 0) throw new IllegalArgumentException("'" + part.trim() + "' is not " + shape + " (e.g. " + example + ")");
      String profile = part.substring(0, eq).trim();
      byName(profile); // names the known profiles if this one is not
      if (by.put(profile, value.apply(profile, part.substring(eq + 1).trim())) != null) {
        throw new IllegalArgumentException("profile " + profile + " is named twice");
      }
    }
    return by;
  }

  public static PayloadProfile byName(String name) {
    for (PayloadProfile p : ALL) {
      if (p.name().equals(name)) return p;
    }
    throw new IllegalArgumentException("unknown payload profile " + (name == null ? "null" : "'" + name + "'") + "; known profiles: "
        + ALL.stream().map(PayloadProfile::name).collect(Collectors.joining(", ")));
  }
}
