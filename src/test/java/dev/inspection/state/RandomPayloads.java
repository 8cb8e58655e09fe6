package dev.inspection.state;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Random inputs for the merge tests, shared by the unit tests and {@code MergeSqlIT}: raw hotel frames (mixed
 * reports and commands over a few loops, so keys collide; nulls; timestamps that jump back and forth), and
 * arbitrary JSON updates for profiles that use every rule.
 */
public final class RandomPayloads {
  /** Every rule on a named field, REPLACE for the rest. */
  public static final PayloadProfile EVERY_RULE = new PayloadProfile("every_rule",
      Map.of("m", MergeRule.MERGE, "c", MergeRule.COALESCE, "x", MergeRule.MAX, "r", MergeRule.REPLACE), MergeRule.REPLACE);
  /** The same fields under other rules, and a non-REPLACE default, so the default rule is exercised too. */
  public static final PayloadProfile OTHER_DEFAULT = new PayloadProfile("other_default",
      Map.of("m", MergeRule.MAX, "x", MergeRule.MERGE), MergeRule.COALESCE);

  private static final int[] TYPES = {1, 2, 7, 12};
  private static final int[] ADDRS = {1, 23, 120};
  private static final String[] KEYS = {"m", "c", "x", "r", "z"};
  private static final double[] DECIMALS = {2.5, -0.75, 10.0, 1e3, 0.125};

  private RandomPayloads() {}

  /** A raw 0x36 report or 0x0F command as the hotel system sends it. */
  public static JsonObject hotelFrame(Random rnd, long aroundTs) {
    boolean report = rnd.nextInt(3) > 0;
    JsonObject raw = new JsonObject().put("frame", report ? "0x36" : (rnd.nextBoolean() ? "0x0F" : "0x0f"));
    switch (rnd.nextInt(10)) {
      case 0 -> { } // no timestamp
      case 1 -> raw.putNull("ts_ms");
      default -> raw.put("ts_ms", aroundTs + rnd.nextInt(20_001) - 10_000);
    }
    switch (rnd.nextInt(4)) {
      case 0 -> { }
      case 1 -> raw.putNull("sys_lock_status");
      default -> raw.put("sys_lock_status", rnd.nextInt(2));
    }
    String list = report ? "device_list" : "control_list";
    switch (rnd.nextInt(8)) {
      case 0 -> { }
      case 1 -> raw.putNull(list);
      case 2 -> raw.put(list, new JsonArray());
      default -> {
        JsonArray elements = new JsonArray();
        for (int i = rnd.nextInt(4) + 1; i > 0; i--) elements.add(report ? deviceState(rnd) : control(rnd));
        raw.put(list, elements);
      }
    }
    if (report || rnd.nextInt(4) == 0) { // a command's fault_list is ignored, but it may carry one
      switch (rnd.nextInt(5)) {
        case 0 -> { }
        case 1 -> raw.putNull("fault_list");
        case 2 -> raw.put("fault_list", new JsonArray());
        default -> {
          JsonArray faults = new JsonArray();
          for (int i = rnd.nextInt(3) + 1; i > 0; i--) {
            faults.add(address(rnd, new JsonObject(), "dev_loop").put("error_type", rnd.nextInt(4)).put("error_data", rnd.nextInt(100)));
          }
          raw.put("fault_list", faults);
        }
      }
    }
    if (rnd.nextInt(5) == 0) raw.put("hotel_id", 1085).put("room_id", "8" + rnd.nextInt(10) + "01");
    return raw;
  }

  /** A sequence of raw frames whose timestamps drift forward but often look out of order. */
  public static List<JsonObject> hotelFrames(Random rnd, int count) {
    List<JsonObject> frames = new ArrayList<>();
    long ts = 1_745_000_000_000L;
    for (int i = 0; i < count; i++) {
      ts += rnd.nextInt(4_000);
      frames.add(hotelFrame(rnd, ts));
    }
    return frames;
  }

  private static JsonObject deviceState(Random rnd) {
    JsonObject e = address(rnd, new JsonObject(), "dev_loop").put("dev_data", rnd.nextInt(256));
    if (rnd.nextBoolean()) e.put("status", rnd.nextBoolean() ? "on" : "off");
    if (rnd.nextInt(6) == 0) e.putNull("brightness");
    return e;
  }

  private static JsonObject control(Random rnd) {
    return address(rnd, new JsonObject(), rnd.nextBoolean() ? "loop" : "dev_loop").put("type_l", rnd.nextInt(4)).put("type_h", rnd.nextInt(256));
  }

  private static JsonObject address(Random rnd, JsonObject e, String loopField) {
    return e.put("dev_type", TYPES[rnd.nextInt(TYPES.length)]).put("dev_addr", ADDRS[rnd.nextInt(ADDRS.length)]).put(loopField, rnd.nextInt(4));
  }

  /** An update of 0..4 of the fields m, c, x, r, z with arbitrary JSON values. */
  public static JsonObject anyUpdate(Random rnd) {
    JsonObject u = new JsonObject();
    for (int i = rnd.nextInt(5); i > 0; i--) u.put(KEYS[rnd.nextInt(KEYS.length)], anyValue(rnd, 2));
    return u;
  }

  /** Objects (often), numbers (often), and everything else JSON has, nested up to {@code depth}. */
  public static Object anyValue(Random rnd, int depth) {
    int kind = rnd.nextInt(depth > 0 ? 10 : 7);
    return switch (kind) {
      case 0 -> null;
      case 1 -> rnd.nextBoolean();
      case 2 -> rnd.nextInt(21) - 10;
      case 3 -> DECIMALS[rnd.nextInt(DECIMALS.length)];
      case 4 -> 1_745_000_000_000L + rnd.nextInt(100);
      case 5 -> "s" + rnd.nextInt(3);
      case 6 -> rnd.nextInt(10);
      case 7 -> {
        JsonArray a = new JsonArray();
        for (int i = rnd.nextInt(3); i > 0; i--) a.add(anyValue(rnd, depth - 1));
        yield a;
      }
      default -> {
        JsonObject o = new JsonObject();
        for (int i = rnd.nextInt(4); i > 0; i--) o.put("k" + rnd.nextInt(4), anyValue(rnd, depth - 1));
        yield o;
      }
    };
  }
}
