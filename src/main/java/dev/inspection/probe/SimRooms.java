package dev.inspection.probe;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Simulated hotel room-control units (seed 004) for the push simulator (issue 13 item 5): one RCU per room, each with
 * four lights, an air conditioner and a curtain. Pure: the randomness and the device time are given.
 *
 * <p>Every round, each RCU has one event: a {@code 0x36} report (after some of its loops, its fault and its lock
 * changed: the full {@code device_list}, the full {@code fault_list}, {@code sys_lock_status}) or a {@code 0x0F}
 * command (one loop switched: that loop in {@code control_list}). A device's frames carry strictly increasing
 * {@code ts_ms}, and each reflects the RCU's true state at its time, so folding a device's frames in device-time
 * order gives the RCU's true state. What a real gateway does to that stream is added on top:
 * <ul>
 *   <li><b>reordered</b>: two events of one RCU in one round, the newer first (the older then gets the newer probe seq);</li>
 *   <li><b>late</b>: a frame held back and sent in the next round, after a newer one of its device;</li>
 *   <li><b>duplicated</b>: a frame sent twice (same {@code guid});</li>
 *   <li><b>malformed</b>: a copy of a frame without {@code ts_ms} or with a bad {@code dev_addr}, which the probe refuses
 *   with the field named (the other frames of the push are still taken).</li>
 * </ul>
 * {@link #settle} ends a run: a full report of every RCU, then stale copies of earlier frames, which must change
 * nothing — after it, each RCU's merged status is its last report.
 */
public final class SimRooms {
  public static final String HOTEL = "sim-hotel";
  /** Chances per RCU and round (reorder, late, duplicate), and per round (one malformed frame). */
  static final double REORDER = 0.08;
  static final double LATE = 0.05;
  static final double DUPLICATE = 0.05;
  static final double MALFORMED = 0.3;
  static final double COMMAND = 0.25;

  /** A frame to push; {@code valid}: the probe must take it. */
  public record Frame(String deviceId, JsonObject body, boolean valid) {}

  private final Random random;
  private final List<Rcu> rcus = new ArrayList<>();
  private final Map<String, Rcu> byDevice = new LinkedHashMap<>();
  private final List<Frame> held = new ArrayList<>();
  private final Map<String, List<JsonObject>> sent = new HashMap<>();
  private long guids;

  public SimRooms(int rooms, Random random) {
    if (rooms < 1) throw new IllegalArgumentException("rooms must be at least 1, got " + rooms);
    this.random = random;
    for (int i = 0; i < rooms; i++) {
      String room = Integer.toString((i / 20 + 1) * 100 + i % 20 + 1); // 101..120, 201..220, …
      Rcu r = new Rcu("sim-rcu-" + room, room);
      rcus.add(r);
      byDevice.put(r.device, r);
    }
  }

  public List<String> devices() {
    return List.copyOf(byDevice.keySet());
  }

  public String roomOf(String device) {
    return byDevice.get(device).room;
  }

  /** One round at device time {@code nowMs}: every RCU's event, with the disorder described above, in push order. */
  public List<Frame> round(long nowMs) {
    List<Frame> out = new ArrayList<>(held);
    held.clear();
    for (Rcu r : rcus) {
      Frame first = event(r, nowMs);
      if (random.nextDouble() < REORDER) {
        out.add(event(r, nowMs)); // the newer one goes first
        out.add(first);
      } else if (random.nextDouble() < LATE) {
        held.add(first);
        continue;
      } else {
        out.add(first);
      }
      if (random.nextDouble() < DUPLICATE) out.add(first);
    }
    if (random.nextDouble() < MALFORMED && !out.isEmpty()) out.add(malformed(out.get(random.nextInt(out.size()))));
    return out;
  }

  /**
   * The end of a run, as two pushes: a full report of every RCU (and whatever was held back, placed before it), then
   * stale copies of each RCU's earlier frames, older than its final report.
   */
  public List<List<Frame>> settle(long nowMs) {
    List<Frame> last = new ArrayList<>(held);
    held.clear();
    List<Frame> stale = new ArrayList<>();
    for (Rcu r : rcus) {
      List<JsonObject> before = List.copyOf(sent.getOrDefault(r.device, List.of()));
      last.add(new Frame(r.device, report(r, nowMs), true));
      if (!before.isEmpty()) stale.add(new Frame(r.device, before.get(random.nextInt(before.size())).copy(), true));
    }
    return List.of(last, stale);
  }

  /** The last report {@link #settle} made of {@code device}: what its merged status must show. */
  public JsonObject finalReport(String device) {
    List<JsonObject> s = sent.get(device);
    return s == null ? null : s.get(s.size() - 1).copy();
  }

  private Frame event(Rcu r, long nowMs) {
    return new Frame(r.device, random.nextDouble() < COMMAND ? command(r, nowMs) : report(r, nowMs), true);
  }

  private JsonObject report(Rcu r, long nowMs) {
    for (Loop l : r.loops) {
      if (random.nextDouble() < 0.2) l.change(random);
    }
    if (r.fault == null && random.nextDouble() < 0.05) {
      r.fault = new JsonObject().put("dev_type", 6).put("dev_addr", 1).put("dev_loop", 1).put("error_type", 1 + random.nextInt(3))
          .put("error_data", random.nextInt(256));
    } else if (r.fault != null && random.nextDouble() < 0.3) {
      r.fault = null;
    }
    if (random.nextDouble() < 0.05) r.lock = 1 - r.lock;
    JsonArray loops = new JsonArray();
    for (Loop l : r.loops) loops.add(l.element("dev_loop"));
    JsonArray faults = r.fault == null ? new JsonArray() : new JsonArray().add(r.fault.copy());
    return stamp(r, nowMs, "0x36").put("sys_lock_status", r.lock).put("device_list", loops).put("fault_list", faults);
  }

  private JsonObject command(Rcu r, long nowMs) {
    Loop l = r.loops.get(random.nextInt(r.loops.size()));
    l.change(random);
    return stamp(r, nowMs, "0x0F").put("control_list", new JsonArray().add(l.element("loop")));
  }

  /** The frame's envelope; its device time strictly after the RCU's previous frame. */
  private JsonObject stamp(Rcu r, long nowMs, String frame) {
    r.ts = Math.max(nowMs, r.ts + 1);
    JsonObject f = new JsonObject().put("frame", frame).put("hotel_id", HOTEL).put("room_id", r.room).put("device_id", r.device)
        .put("guid", "sim-" + Long.toString(++guids, 36) + "-" + Long.toHexString(random.nextLong() & 0xffffffL)).put("ts_ms", r.ts);
    sent.computeIfAbsent(r.device, d -> new ArrayList<>()).add(f);
    return f;
  }

  private Frame malformed(Frame of) {
    JsonObject bad = of.body().copy().put("guid", "sim-bad-" + Long.toString(++guids, 36));
    if (random.nextBoolean() || !bad.containsKey("device_list")) {
      bad.remove("ts_ms");
    } else {
      bad.getJsonArray("device_list").getJsonObject(0).put("dev_addr", "A1");
    }
    return new Frame(of.deviceId(), bad, false);
  }

  private static final class Rcu {
    final String device;
    final String room;
    final List<Loop> loops = List.of(new Loop(1, 1, 1), new Loop(1, 1, 2), new Loop(1, 1, 3), new Loop(1, 1, 4), new Loop(6, 1, 1),
        new Loop(3, 2, 1));
    JsonObject fault;
    int lock = 1;
    long ts;

    Rcu(String device, String room) {
      this.device = device;
      this.room = room;
    }
  }

  /** One loop: {@code type_l} on/off (the AC's mode), {@code type_h} the level (a light's brightness, the AC's set point). */
  private static final class Loop {
    final int type;
    final int addr;
    final int loop;
    int low;
    int high;

    Loop(int type, int addr, int loop) {
      this.type = type;
      this.addr = addr;
      this.loop = loop;
      this.high = type == 6 ? 24 : 0;
    }

    void change(Random random) {
      if (type == 6) {
        low = random.nextInt(4);
        high = 16 + random.nextInt(15);
      } else {
        low = 1 - low;
        high = low == 0 ? 0 : type == 3 ? 100 : 10 * (1 + random.nextInt(10));
      }
    }

    JsonObject element(String loopField) {
      return new JsonObject().put("dev_type", type).put("dev_addr", addr).put(loopField, loop).put("type_l", low).put("type_h", high);
    }
  }
}
