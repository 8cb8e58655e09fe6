package dev.inspection.worker;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * Admission to the commit group's queue: a slot starts its next batch (picks it from its mailbox, parses and plans it) only
 * while the batches queued for a transaction and those being planned hold fewer than {@code limitRows} results; otherwise it
 * waits here until a transaction ends, and the slots waiting with critical results in their mailbox go first.
 *
 * <p>Why: without it, at capacity every slot planned its next batch as soon as the last one committed and queued it behind
 * all the others. A capacity run (2026-12-07) held about 180,000 planned results in the queue, ten seconds of the database's
 * work: a batch waited 10 s for its transaction, and a critical result that reached its slot meanwhile waited for that batch and
 * then for its own, so critical results were committed 19.5 s after they were collected at p99 against 22.3 s for the rest,
 * and the worker's heap held every one of those results parsed. Waiting here instead, the results stay in the mailbox as the
 * broker's bytes, and a slot picks them when the database can take them: what arrived meanwhile goes with it, critical first.
 *
 * <p>Pure and single-threaded (the worker's context); the owners are the slots' processors.
 */
final class CommitRoom {
  private final int limitRows;
  private int queuedRows;
  private int reservedRows;
  private final Map<Object, Integer> reserved = new IdentityHashMap<>();
  private final Map<Object, BooleanSupplier> critical = new LinkedHashMap<>();
  private final Map<Object, BooleanSupplier> others = new LinkedHashMap<>();
  private boolean waking;
  private boolean wakeAgain;

  /** {@code limitRows} at least 1: a batch may start while fewer results than this are queued or being planned. */
  CommitRoom(int limitRows) {
    this.limitRows = Math.max(1, limitRows);
  }

  boolean hasRoom() {
    return queuedRows + reservedRows < limitRows;
  }

  /**
   * Whether {@code owner} may start a batch now. If not, it waits in line: when there is room {@code go} runs, the owners with
   * critical results before the others; it answers false when the owner cannot start now (a batch of it is still in flight),
   * and then the owner keeps its place and the next one is asked. Asking again keeps an owner's place, or moves it to the
   * critical ones when it has them now (a critical result reached its mailbox while it waited).
   */
  boolean admits(Object owner, boolean hasCritical, BooleanSupplier go) {
    if (hasRoom()) {
      forget(owner);
      return true;
    }
    if (hasCritical) {
      others.remove(owner);
      critical.putIfAbsent(owner, go);
    } else if (!critical.containsKey(owner)) {
      others.putIfAbsent(owner, go);
    }
    return false;
  }

  /** Whether {@code owner} waits for room. */
  boolean waiting(Object owner) {
    return critical.containsKey(owner) || others.containsKey(owner);
  }

  /** {@code owner} no longer waits (it closed, or started its batch another way). */
  void forget(Object owner) {
    critical.remove(owner);
    others.remove(owner);
  }

  /** {@code owner} parsed a batch of {@code rows} results: they count against the room until {@link #queued} or {@link #release}. */
  void reserve(Object owner, int rows) {
    Integer before = reserved.put(owner, Math.max(0, rows));
    reservedRows += Math.max(0, rows) - (before == null ? 0 : before);
  }

  /** {@code owner}'s batch is handed to the group: its reservation becomes {@code rows} queued results (the planner's count). */
  void queued(Object owner, int rows) {
    Integer r = owner == null ? null : reserved.remove(owner);
    if (r != null) reservedRows -= r;
    queuedRows += rows;
  }

  /** {@code rows} queued results went into a transaction. */
  void dequeued(int rows) {
    queuedRows = Math.max(0, queuedRows - rows);
  }

  /** {@code owner}'s batch ended without being queued (nothing to write, or it failed first): its reservation goes. */
  void release(Object owner) {
    Integer r = reserved.remove(owner);
    if (r != null) reservedRows -= r;
  }

  int queuedRows() {
    return queuedRows;
  }

  int reservedRows() {
    return reservedRows;
  }

  /**
   * Asks the waiting owners' {@code go}, critical ones first and each kind in the order they began to wait, while there is room:
   * each may start a batch, which reserves its results before the next one is asked; one that answers false keeps its place.
   * Safe to call from a {@code go} (the call is folded into the running one).
   */
  void wake() {
    if (waking) {
      wakeAgain = true;
      return;
    }
    waking = true;
    try {
      do {
        wakeAgain = false;
        for (Map<Object, BooleanSupplier> line : List.of(critical, others)) {
          if (!hasRoom()) return; // the common case at capacity (every commit and every batch's end wakes): nothing copied
          if (line.isEmpty()) continue;
          for (Object owner : new ArrayList<>(line.keySet())) {
            if (!hasRoom()) return;
            BooleanSupplier go = line.get(owner);
            if (go == null) continue; // it left the line meanwhile
            if (go.getAsBoolean()) {
              critical.remove(owner);
              others.remove(owner);
            }
          }
        }
      } while (wakeAgain);
    } finally {
      waking = false;
    }
  }

  /** The waiting owners, critical first (tests). */
  List<Object> waiters() {
    List<Object> out = new ArrayList<>(critical.keySet());
    out.addAll(others.keySet());
    return out;
  }
}
