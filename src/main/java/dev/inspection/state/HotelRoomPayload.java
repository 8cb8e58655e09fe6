package dev.inspection.state;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.util.Locale;

/**
 * Turns a raw hotel room-control message (seed 004) into the status payload that {@link PayloadProfiles#HOTEL_ROOM}
 * merges. The two frames:
 * <ul>
 *   <li>{@code 0x36}, a device's report: {@code device_list} (loop states) and {@code fault_list} (all current faults);</li>
 *   <li>{@code 0x0F}, a command sent to it: {@code control_list} (loop states asked for).</li>
 * </ul>
 *
 * <table>
 *   <caption>raw field → stored field (rule)</caption>
 *   <tr><td>{@code ts_ms}</td><td>{@code ts_ms} (MAX), an integer; left out when absent or null</td></tr>
 *   <tr><td>{@code sys_lock_status}</td><td>{@code sys_lock_status} (COALESCE), an integer; left out when absent
 *       or null, so the stored one stays</td></tr>
 *   <tr><td>{@code device_list} (0x36) / {@code control_list} (0x0F)</td><td>{@code dev_loops} (MERGE): an object with
 *       one key per element, {@code dev_type}, {@code dev_addr} and {@code dev_loop} each zero-padded to 3 digits
 *       (type 1, address 23, loop 12 → {@code "001023012"}); its value is the element without those three fields
 *       (and without {@code loop}, which a {@code control_list} element may carry instead of {@code dev_loop}).
 *       Two elements with the same key: the later one wins, as it would in two messages. Left out when the list is
 *       absent or null; an empty list gives {@code {}}.</td></tr>
 *   <tr><td>{@code fault_list} (0x36 only)</td><td>{@code faulty_device_count} (REPLACE): the list as it is, since a
 *       report carries every current fault; left out when absent or null, so the stored list stays. A
 *       {@code fault_list} on a command is ignored: a command says nothing about faults.</td></tr>
 *   <tr><td>{@code hotel_id}, {@code room_id}, {@code guid}</td><td>the same (REPLACE), as sent: a string of 1..64
 *       characters or (hotel and room) a non-negative integer; left out when absent or null. Where the room's
 *       devices are found ({@code GET /api/v1/hotels/{hotel}/rooms/{room}}, an index of V012) and the frame that
 *       last changed the row.</td></tr>
 * </table>
 * Other raw fields (the frame itself, a list of the other frame) are not stored. The loop
 * states are replaced per loop, not merged field by field: a command for loop {@code 001023012} replaces what the
 * last report said about that loop, exactly as PostgreSQL's {@code dev_loops || new} does.
 *
 * <p>Anything malformed throws {@link IllegalArgumentException} whose message names the element and the field, e.g.
 * {@code control_list[1].dev_addr: must be an integer 0..999, got "A1"}, for the dead-letter reason.
 */
public final class HotelRoomPayload {
  public static final String TS_MS = "ts_ms";
  public static final String SYS_LOCK_STATUS = "sys_lock_status";
  public static final String DEV_LOOPS = "dev_loops";
  /** Named as in seed 004's table, although it holds the fault list itself. */
  public static final String FAULTS = "faulty_device_count";
  public static final String HOTEL_ID = "hotel_id";
  public static final String ROOM_ID = "room_id";
  public static final String GUID = "guid";

  public static final String REPORT = "0x36";
  public static final String COMMAND = "0x0F";

  private HotelRoomPayload() {}

  public static JsonObject normalize(JsonObject raw) {
    if (raw == null) throw new IllegalArgumentException("hotel room message: missing (null)");
    boolean report = isFrame(raw.getValue("frame"), REPORT);
    if (!report && !isFrame(raw.getValue("frame"), COMMAND)) {
      throw new IllegalArgumentException("frame: must be \"0x36\" (report) or \"0x0F\" (command), got " + show(raw.getValue("frame")));
    }
    JsonObject out = new JsonObject();
    Object ts = raw.getValue(TS_MS);
    if (ts != null) out.put(TS_MS, integer(ts, Long.MIN_VALUE, Long.MAX_VALUE, TS_MS));
    Object lock = raw.getValue(SYS_LOCK_STATUS);
    if (lock != null) out.put(SYS_LOCK_STATUS, (int) integer(lock, Short.MIN_VALUE, Short.MAX_VALUE, SYS_LOCK_STATUS));
    for (String field : new String[] {HOTEL_ID, ROOM_ID, GUID}) {
      Object v = raw.getValue(field);
      if (v != null) out.put(field, identifier(v, field, !field.equals(GUID)));
    }
    String listName = report ? "device_list" : "control_list";
    Object list = raw.getValue(listName);
    if (list != null) out.put(DEV_LOOPS, loops(list, listName, !report));
    if (report) {
      Object faults = raw.getValue("fault_list");
      if (faults != null) {
        if (!(faults instanceof JsonArray a)) throw new IllegalArgumentException("fault_list: must be an array, got " + show(faults));
        out.put(FAULTS, a.copy());
      }
    }
    return out;
  }

  /** The 9-digit key of a loop: type, address and loop number, each zero-padded to 3 digits. */
  public static String loopKey(int devType, int devAddr, int devLoop) {
    for (int part : new int[] {devType, devAddr, devLoop}) {
      if (part < 0 || part > 999) throw new IllegalArgumentException("a loop key part must be 0..999, got " + part);
    }
    return String.format(Locale.ROOT, "%03d%03d%03d", devType, devAddr, devLoop);
  }

  private static JsonObject loops(Object list, String listName, boolean loopAlias) {
    if (!(list instanceof JsonArray elements)) throw new IllegalArgumentException(listName + ": must be an array, got " + show(list));
    JsonObject loops = new JsonObject();
    for (int i = 0; i < elements.size(); i++) {
      String where = listName + "[" + i + "]";
      if (!(elements.getValue(i) instanceof JsonObject element)) {
        throw new IllegalArgumentException(where + ": must be an object, got " + show(elements.getValue(i)));
      }
      int type = part(element, "dev_type", where);
      int addr = part(element, "dev_addr", where);
      JsonObject state = element.copy();
      state.remove("dev_type");
      state.remove("dev_addr");
      state.remove("dev_loop");
      int loop;
      if (loopAlias) state.remove("loop");
      if (loopAlias && element.getValue("loop") != null) {
        loop = part(element, "loop", where);
        if (element.getValue("dev_loop") != null && part(element, "dev_loop", where) != loop) {
          throw new IllegalArgumentException(where + ": dev_loop " + show(element.getValue("dev_loop")) + " and loop "
              + show(element.getValue("loop")) + " disagree");
        }
      } else {
        loop = part(element, "dev_loop", where);
      }
      loops.put(loopKey(type, addr, loop), state);
    }
    return loops;
  }

  private static int part(JsonObject element, String field, String where) {
    Object v = element.getValue(field);
    if (v == null) throw new IllegalArgumentException(where + "." + field + ": missing");
    return (int) integer(v, 0, 999, where + "." + field);
  }

  private static long integer(Object v, long min, long max, String where) {
    BigDecimal n = MergeRule.number(v);
    if (n != null) {
      try {
        long exact = n.longValueExact();
        if (exact >= min && exact <= max) return exact;
      } catch (ArithmeticException notAnInteger) {
        // reported below
      }
    }
    String range = min == Long.MIN_VALUE ? "" : " " + min + ".." + max;
    throw new IllegalArgumentException(where + ": must be an integer" + range + ", got " + show(v));
  }

  private static Object identifier(Object v, String field, boolean numberToo) {
    if (numberToo && (v instanceof Integer || v instanceof Long) && ((Number) v).longValue() >= 0) return v;
    if (v instanceof String s && !s.isBlank() && s.length() <= 64) return s;
    throw new IllegalArgumentException(field + ": must be a string of 1..64 characters" + (numberToo ? " or a non-negative integer" : "")
        + ", got " + show(v));
  }

  private static boolean isFrame(Object frame, String name) {
    return frame instanceof String s && s.equalsIgnoreCase(name);
  }

  private static String show(Object v) {
    if (v == null) return "null";
    if (v instanceof String s) return "\"" + (s.length() > 40 ? s.substring(0, 40) + "…" : s) + "\"";
    if (v instanceof JsonObject) return "an object";
    if (v instanceof JsonArray) return "an array";
    return String.valueOf(v);
  }
}
