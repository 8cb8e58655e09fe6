package dev.inspection.worker;

import dev.inspection.control.SlotState;
import dev.inspection.control.WorkerState;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a worker does with one read of its leases: a pure function from the rows read (and when that
 * read was sent), what the worker holds locally and its own state, to a list of actions and the new
 * holdings. No I/O; {@link HeldSlots} carries the actions out.
 *
 * <p>Reads and local changes share one sequence: a read sent before a local change of a slot (its
 * {@code touched} number is greater than the read's) says nothing about that slot any more — a late
 * heartbeat renewal must not stop a slot this worker has just started loading, nor restart one it has
 * just released.
 *
 * <p>The worker itself never changes an owner or an epoch (only the leader does): it follows.
 * LOADING_NEW → load the slot's derived state (INV-10), then consume; ACTIVE but not held here (this worker dropped it
 * after its lease reads failed, and the leader left it here) → load it again too, then consume: its derived state in
 * memory went with the drop, and a slot consumed without it would start every device's counters again; MOVING → stop,
 * commit and ack what is held, hand the slot back (seed 000 §4.3); gone, at another epoch, or
 * DRAINING_OLD while not being released → stop at once.
 */
final class LeaseReconciler {
  private LeaseReconciler() {}

  /** Where a held slot is: its derived state loading, its queues consumed, or being handed back. */
  enum Phase { LOADING, CONSUMING, RELEASING }

  /** One row of {@code slot_lease} owned by this worker. */
  record Lease(int slot, long epoch, SlotState state) {}

  /** A slot this worker holds at an epoch. A new instance per change: callbacks compare instances to see that nothing changed meanwhile. */
  record Holding(long epoch, Phase phase) {
    Holding consuming() {
      return new Holding(epoch, Phase.CONSUMING);
    }

    Holding releasing() {
      return new Holding(epoch, Phase.RELEASING);
    }
  }

  /** The leases read, and the sequence number taken when the read was sent. */
  record Read(List<Lease> leases, long seq) {}

  /** The worker's side: its holdings, the sequence number of each slot's last local change, its own state, whether it is stopping. */
  record Local(Map<Integer, Holding> holdings, Map<Integer, Long> touched, WorkerState state, boolean stopping) {}

  /** A step to take for one slot at one epoch. */
  sealed interface Action {
    int slot();

    long epoch();
  }

  /** INV-10: load the slot's derived state, mark it ACTIVE (if it is not yet), then consume. */
  record Load(int slot, long epoch) implements Action {}

  /** Graceful: stop consuming, commit and ack what is held, then hand the slot back. */
  record Release(int slot, long epoch) implements Action {}

  /** Nothing is held here: mark the slot DRAINING_OLD so the leader may hand it on. */
  record HandBack(int slot, long epoch) implements Action {}

  /** Immediate: the lease is gone; everything unacked goes back to the queue. */
  record Drop(int slot, long epoch) implements Action {}

  /** The actions in the order to take them, and the holdings once they are taken. */
  record Result(List<Action> actions, Map<Integer, Holding> holdings) {}

  static Result reconcile(Read read, Local local) {
    Map<Integer, Holding> held = new TreeMap<>(local.holdings());
    List<Action> actions = new ArrayList<>();
    Map<Integer, Lease> now = new TreeMap<>();
    for (Lease r : read.leases()) if (!stale(local, r.slot(), read.seq())) now.put(r.slot(), r);
    boolean mayConsume = local.state().consumes() || local.stopping();
    for (Map.Entry<Integer, Holding> e : new TreeMap<>(local.holdings()).entrySet()) {
      int slot = e.getKey();
      Holding h = e.getValue();
      if (stale(local, slot, read.seq())) continue;
      Lease row = now.get(slot);
      boolean gone = row == null || row.epoch() != h.epoch() || (row.state() == SlotState.DRAINING_OLD && h.phase() != Phase.RELEASING);
      if (gone || !mayConsume) {
        held.remove(slot);
        actions.add(new Drop(slot, h.epoch()));
      }
    }
    if (mayConsume) {
      for (Lease row : now.values()) follow(row, held, local.stopping(), actions);
    }
    return new Result(List.copyOf(actions), Collections.unmodifiableMap(held));
  }

  private static void follow(Lease row, Map<Integer, Holding> held, boolean stopping, List<Action> actions) {
    int slot = row.slot();
    long epoch = row.epoch();
    Holding h = held.get(slot);
    switch (row.state()) {
      case LOADING_NEW -> {
        if (h != null) return;
        if (stopping) {
          actions.add(new HandBack(slot, epoch)); // a stopping worker takes nothing new: straight back to the leader
        } else {
          held.put(slot, new Holding(epoch, Phase.LOADING));
          actions.add(new Load(slot, epoch));
        }
      }
      case ACTIVE -> {
        if (h != null) return;
        if (stopping) {
          actions.add(new HandBack(slot, epoch)); // as for LOADING_NEW: a stopping worker takes nothing up again
        } else {
          held.put(slot, new Holding(epoch, Phase.LOADING));
          actions.add(new Load(slot, epoch));
        }
      }
      case MOVING -> {
        if (h == null) {
          actions.add(new HandBack(slot, epoch));
        } else if (h.phase() == Phase.CONSUMING) {
          held.put(slot, h.releasing());
          actions.add(new Release(slot, epoch));
        }
      }
      default -> { }
    }
  }

  /**
   * A stopping worker's own hand-back of what the leader did not move: consumed slots are released
   * gracefully, slots still loading are dropped and handed straight back, releasing ones are on their way.
   */
  static Result releaseAll(Map<Integer, Holding> holdings) {
    Map<Integer, Holding> held = new TreeMap<>(holdings);
    List<Action> actions = new ArrayList<>();
    for (Map.Entry<Integer, Holding> e : new TreeMap<>(holdings).entrySet()) {
      int slot = e.getKey();
      Holding h = e.getValue();
      if (h.phase() == Phase.CONSUMING) {
        held.put(slot, h.releasing());
        actions.add(new Release(slot, h.epoch()));
      } else if (h.phase() == Phase.LOADING) {
        held.remove(slot);
        actions.add(new Drop(slot, h.epoch()));
        actions.add(new HandBack(slot, h.epoch()));
      }
    }
    return new Result(List.copyOf(actions), Collections.unmodifiableMap(held));
  }

  private static boolean stale(Local local, int slot, long readSeq) {
    return local.touched().getOrDefault(slot, 0L) > readSeq;
  }
}
