package dev.inspection.worker;

import java.util.function.BooleanSupplier;

/**
 * A slot's turn at the worker's commit queue ({@link CommitRoom}): whether its next batch may start now, and when a batch that
 * had to wait for room was first due, so that its time ({@code worker_commit_latency}, the fleet mode's commit p99) still counts
 * the wait, as it counted the wait in the queue before the room existed. The worker's context only.
 */
final class SlotTurn {
  private final CommitGroup store;
  private final Object owner;
  /** When a due batch began to wait for room; 0: it does not wait. */
  private long waitSince;

  SlotTurn(CommitGroup store, Object owner) {
    this.store = store;
    this.owner = owner;
  }

  /** Whether a due batch may start now (a closing slot's always may); if not, it waits in line and {@code go} is asked when there is room. */
  boolean admits(boolean closing, boolean critical, BooleanSupplier go) {
    if (closing || store.admits(owner, critical, go)) return true;
    if (waitSince == 0) waitSince = System.nanoTime();
    return false;
  }

  /** When a batch starting now began: when it was first due, if it waited; {@code ahead} (the high lane alone): now, and the wait goes on. */
  long began(boolean ahead) {
    long now = System.nanoTime();
    if (ahead || waitSince == 0) return now;
    long since = waitSince;
    waitSince = 0;
    return since;
  }

  /** The slot's deliveries are gone, or it closed: nothing of it waits. */
  void cancel() {
    waitSince = 0;
    store.forget(owner);
  }
}
