package dev.inspection.worker;

import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.InvalidMessage;
import dev.inspection.messaging.SlotHash;
import dev.inspection.messaging.SlotMapWindow;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * What a worker checks of a parsed result before it may touch a device's status (issue 10 item 4). Pure:
 * the caller passes the time. A result that fails is dead-lettered alone; the rest of its batch commits.
 * <ul>
 *   <li>{@code stale_slot_map}: its {@code slot_map_version} was replaced by a reshard whose grace window has
 *       closed (seed 000 §3.4: the probe missed the switch); {@code unknown_slot_map}: a version newer than
 *       this worker's map ({@link SlotMapWindow#judge});</li>
 *   <li>{@code wrong_slot}: the envelope names another slot than the queue it came from, or its device does
 *       not hash to this slot ({@code CRC32(device_id) mod} the slot count of the envelope's map version).
 *       Such a result would be written by the wrong owner, outside the lease that fences the device's real
 *       slot;</li>
 *   <li>{@code future_cycle}: its {@code cycle_id} (the probe's check time in epoch ms) lies more than
 *       {@code worker.max.future.skew.ms} ahead of the worker's clock. Results are ordered by
 *       {@code (cycle_id, seq)}, so one such result would win over every real one until that time and
 *       freeze the device's status and alerts;</li>
 *   <li>{@code collected_after_cycle}: its {@code collected_at} lies more than {@link #MAX_COLLECTED_AFTER_CYCLE_MS} (a day)
 *       after its {@code cycle_id}. The probe stamps {@code cycle_id} at or after the check's time (its outbox takes the
 *       larger of the two and its own high-water mark), and the worker reads a touched alert's events of the last 7
 *       days by {@code cycle_id}, the key of the day partitions of {@code alert_event} ({@link AlertWrites#READ_EVENTS}):
 *       an event collected days after its cycle would be left out of its alert;</li>
 *   <li>what PostgreSQL would refuse, checked before it sees it (D9), so the common case never costs a
 *       refused transaction and its split: {@code bad_field} for a {@code device_id} or {@code message_id}
 *       holding a NUL character ({@code text} cannot store one) or a {@code message_id} longer than its
 *       column (160 characters); {@code invalid_payload} for a NUL in any string of the payload, key or value,
 *       at any depth ({@code jsonb} refuses {@code \u0000}: SQLSTATE 22P05), the detail naming its path;</li>
 *
 *   <li>{@link Forward}: the slot has been switched to a newer map version ({@code slot_lease.slot_map_version},
 *       set by the leader's {@code SlotSwitch} when it moved this slot's remapped devices away) and the result,
 *       stamped with an older version inside its grace window, is of a device that now lives in another slot: it
 *       is sent on to that slot, stamped with the slot's version, instead of being written here (this owner no
 *       longer holds the device's derived state, and the fencing upsert would not let it write the device).</li>
 * </ul>
 *
 * @param slot the slot whose queue the result came from
 * @param map the slot map's versions as this worker last read them (times on the worker's clock)
 * @param maxFutureSkewMs how far ahead of now a cycle_id may be
 * @param slotVersion the map version this slot's devices were switched to when it was loaded (1 before any reshard)
 */
public record ResultGuard(int slot, Supplier<SlotMapWindow> map, long maxFutureSkewMs, long slotVersion) {
  /** How far after its cycle_id a result's collected_at may lie (a day): {@code collected_after_cycle} beyond. */
  public static final long MAX_COLLECTED_AFTER_CYCLE_MS = 86_400_000L;

  public ResultGuard {
    if (maxFutureSkewMs < 0) throw new IllegalArgumentException("maxFutureSkewMs must be >= 0, got " + maxFutureSkewMs);
  }

  /** A slot never switched by a reshard. */
  public ResultGuard(int slot, Supplier<SlotMapWindow> map, long maxFutureSkewMs) {
    this(slot, map, maxFutureSkewMs, 1);
  }

  /** A result to send on to the slot its device moved to: its envelope restamped with that slot and map version. */
  public static final class Forward extends InvalidMessage {
    public final Envelope restamped;

    Forward(Envelope restamped, String detail) {
      super("forwarded", detail);
      this.restamped = restamped;
    }
  }

  /** A guard for a map that never changes: one version with {@code totalSlots} ({@code slots.total}). */
  public ResultGuard(int slot, int totalSlots, long maxFutureSkewMs) {
    this(slot, fixed(SlotMapWindow.single(totalSlots)), maxFutureSkewMs);
  }

  private static Supplier<SlotMapWindow> fixed(SlotMapWindow m) {
    return () -> m;
  }

  /** Longest {@code message_id} the history and current tables take ({@code VARCHAR(160)}). */
  static final int MAX_MESSAGE_ID = 160;

  /** Throws the reason when the result must not be applied at {@code nowMs}; returns normally when it may. */
  public void check(Envelope e, long nowMs) throws InvalidMessage {
    if (e.deviceId().indexOf('\u0000') >= 0 || e.messageId().indexOf('\u0000') >= 0) {
      throw new InvalidMessage("bad_field", "envelope." + (e.deviceId().indexOf('\u0000') >= 0 ? "device_id" : "message_id")
          + " contains a NUL character (\\u0000), which PostgreSQL cannot store");
    }
    int idLength = e.messageId().codePointCount(0, e.messageId().length());
    if (idLength > MAX_MESSAGE_ID) {
      throw new InvalidMessage("bad_field", "envelope.message_id has " + idLength + " characters; at most " + MAX_MESSAGE_ID
          + " fit (is_node is too long)");
    }
    String nul = nulPath(e.payload(), "payload");
    if (nul != null) {
      throw new InvalidMessage("invalid_payload", nul + " contains a NUL character (\\u0000), which PostgreSQL's jsonb refuses (SQLSTATE 22P05):"
          + " remove or replace it in the probe's check");
    }
    if (e.slotId() != slot) {
      throw new InvalidMessage("wrong_slot", "envelope.slot_id " + e.slotId() + " arrived on slot " + slot
          + "'s queue: probe and worker disagree on slots.total or the routing key");
    }
    SlotMapWindow.Verdict v = map.get().judge(e.slotMapVersion(), nowMs);
    if (v.kind() == SlotMapWindow.Kind.STALE) throw new InvalidMessage(SlotMapWindow.STALE_REASON, v.detail());
    if (v.kind() == SlotMapWindow.Kind.UNKNOWN) throw new InvalidMessage("unknown_slot_map", v.detail());
    int totalSlots = v.totalSlots();
    int home = SlotHash.slotOf(e.deviceId(), totalSlots);
    if (home != slot) {
      throw new InvalidMessage("wrong_slot", "device " + e.deviceId() + " hashes to slot " + home + " (of " + totalSlots + ", slot map version "
          + Math.max(1, e.slotMapVersion()) + "), not to slot " + slot
          + " whose queue it arrived on: a forged or misrouted result, or probe and worker disagree on the slot map");
    }
    long ahead = e.cycleId() - nowMs;
    if (ahead > maxFutureSkewMs) {
      throw new InvalidMessage("future_cycle", "cycle_id " + e.cycleId() + " is " + ahead + " ms ahead of this worker's clock (limit "
          + maxFutureSkewMs + " ms, worker.max.future.skew.ms): a forged result or a probe whose clock runs ahead");
    }
    long after = e.collectedAt().toEpochMilli() - e.cycleId();
    if (after > MAX_COLLECTED_AFTER_CYCLE_MS) {
      throw new InvalidMessage("collected_after_cycle", "collected_at " + e.collectedAt() + " is " + after + " ms after cycle_id " + e.cycleId()
          + " (limit " + MAX_COLLECTED_AFTER_CYCLE_MS + " ms): the probe stamps cycle_id at or after the check's time; a forged result or a"
          + " producer that does not (its alert events would be read by cycle_id)");
    }
    forwardIfMoved(e, nowMs);
  }

  /** Throws a {@link Forward} when the device moved out of this slot in a version newer than the result's stamp. */
  private void forwardIfMoved(Envelope e, long nowMs) throws Forward {
    long stamped = Math.max(1, e.slotMapVersion());
    if (stamped >= slotVersion) return;
    SlotMapWindow.Version to = map.get().version(slotVersion);
    if (to == null) return; // a version this worker's map does not hold yet: judged again once it is read
    int home = SlotHash.slotOf(e.deviceId(), to.totalSlots());
    if (home == slot) return;
    Envelope restamped = new Envelope(e.messageId(), e.deviceId(), home, to.version(), e.resourceVersion(), e.planVersion(), e.isNode(),
        e.cycleId(), e.seq(), e.collectedAt(), e.priority(), e.payload());
    throw new Forward(restamped, "device " + e.deviceId() + " moved from slot " + slot + " to slot " + home + " with slot map version " + to.version()
        + "; this result, stamped with version " + stamped + " inside its grace window, is sent on there");
  }

  /** The path of the first key or string value holding a NUL character, or null when there is none. */
  static String nulPath(Object value, String path) {
    if (value instanceof String s) return s.indexOf('\u0000') >= 0 ? path : null;
    if (value instanceof JsonObject o) value = o.getMap();
    if (value instanceof JsonArray a) value = a.getList();
    if (value instanceof Map<?, ?> m) {
      for (Map.Entry<?, ?> entry : m.entrySet()) {
        String key = String.valueOf(entry.getKey());
        String at = path + "." + printable(key);
        if (key.indexOf('\u0000') >= 0) return at + " (the key)";
        String found = nulPath(entry.getValue(), at);
        if (found != null) return found;
      }
    } else if (value instanceof List<?> l) {
      for (int i = 0; i < l.size(); i++) {
        String found = nulPath(l.get(i), path + "[" + i + "]");
        if (found != null) return found;
      }
    }
    return null;
  }

  /** A key as a detail may show it: NUL written as {@code \u0000} (a dead letter's detail is stored as text), long keys cut. */
  private static String printable(String key) {
    String k = key.length() > 64 ? key.substring(0, 64) + "…" : key;
    return k.replace("\u0000", "\\u0000");
  }
}
