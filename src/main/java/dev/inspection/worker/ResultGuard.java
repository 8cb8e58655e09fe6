package dev.inspection.worker;

import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.InvalidMessage;
import dev.inspection.messaging.SlotHash;

/**
 * What a worker checks of a parsed result before it may touch a device's status (issue 10 item 4). Pure:
 * the caller passes the time. A result that fails is dead-lettered alone; the rest of its batch commits.
 * <ul>
 *   <li>{@code wrong_slot}: the envelope names another slot than the queue it came from, or its device does
 *       not hash to this slot ({@code CRC32(device_id) mod slots.total}). Such a result would be written by
 *       the wrong owner, outside the lease that fences the device's real slot;</li>
 *   <li>{@code future_cycle}: its {@code cycle_id} (the probe's check time in epoch ms) lies more than
 *       {@code worker.max.future.skew.ms} ahead of the worker's clock. Results are ordered by
 *       {@code (cycle_id, seq)}, so one such result would win over every real one until that time and
 *       freeze the device's status and alerts.</li>
 * </ul>
 *
 * @param slot the slot whose queue the result came from
 * @param totalSlots {@code slots.total}
 * @param maxFutureSkewMs how far ahead of now a cycle_id may be
 */
public record ResultGuard(int slot, int totalSlots, long maxFutureSkewMs) {
  public ResultGuard {
    if (totalSlots < 1) throw new IllegalArgumentException("totalSlots must be >= 1, got " + totalSlots);
    if (maxFutureSkewMs < 0) throw new IllegalArgumentException("maxFutureSkewMs must be >= 0, got " + maxFutureSkewMs);
  }

  /** Throws the reason when the result must not be applied at {@code nowMs}; returns normally when it may. */
  public void check(Envelope e, long nowMs) throws InvalidMessage {
    if (e.slotId() != slot) {
      throw new InvalidMessage("wrong_slot", "envelope.slot_id " + e.slotId() + " arrived on slot " + slot
          + "'s queue: probe and worker disagree on slots.total or the routing key");
    }
    int home = SlotHash.slotOf(e.deviceId(), totalSlots);
    if (home != slot) {
      throw new InvalidMessage("wrong_slot", "device " + e.deviceId() + " hashes to slot " + home + " (of " + totalSlots
          + "), not to slot " + slot + " whose queue it arrived on: a forged or misrouted result, or probe and worker disagree on slots.total");
    }
    long ahead = e.cycleId() - nowMs;
    if (ahead > maxFutureSkewMs) {
      throw new InvalidMessage("future_cycle", "cycle_id " + e.cycleId() + " is " + ahead + " ms ahead of this worker's clock (limit "
          + maxFutureSkewMs + " ms, worker.max.future.skew.ms): a forged result or a probe whose clock runs ahead");
    }
  }
}
