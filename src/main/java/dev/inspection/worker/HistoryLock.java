package dev.inspection.worker;

/**
 * Whether history takes a batch's rows now, from what the batches' history writes met. Pure (times are passed in);
 * thread-safe, as the back-fill reads it too.
 *
 * <p>A batch's history statement waits at most {@code worker.degraded.history.lock.timeout.ms} for a lock on history or
 * the rollups (an operator's {@code ALTER TABLE}, {@code VACUUM FULL}, {@code LOCK TABLE}, a plain {@code CREATE INDEX}).
 * When it times out, history counts as locked: the batch is written again at once without any history row, and so are
 * the batches after it, which do not wait for the lock at all; their history rows, critical ones too, go to the
 * back-fill queue ({@link Spill}). Current status, derived state and alerts go on (seed 000 §7.5: they are always
 * written). Every {@link #PROBE_AFTER_MS} one batch tries history again, the probe; the others keep spilling. When the
 * probe's history write succeeds, history is free again. The back-fill waits for that too ({@link #locked}): a
 * back-fill that met the lock would requeue what it took, each requeue a delivery towards the queue's limit.
 */
final class HistoryLock {
  /** How long after a timeout the batches spill their history without trying it; then one batch tries again. */
  static final long PROBE_AFTER_MS = 5_000;

  private boolean locked;
  private long since;
  private long probeAt;
  private boolean probing;

  /**
   * Whether a batch starting at {@code nowMs} writes its history rows (false: it spills them all). A true while
   * history is locked makes that batch the probe, until {@link #wrote}, {@link #timedOut} or {@link #probeEnded}.
   */
  synchronized boolean writesHistory(long nowMs) {
    if (!locked) return true;
    if (probing || nowMs < probeAt) return false;
    probing = true;
    return true;
  }

  /**
   * A batch's history write waited out the timeout at {@code nowMs}; true when this begins a locked spell (the
   * caller logs it once).
   */
  synchronized boolean timedOut(long nowMs) {
    boolean first = !locked;
    if (first) since = nowMs;
    locked = true;
    probing = false;
    probeAt = nowMs + PROBE_AFTER_MS;
    return first;
  }

  /** A batch's history write succeeded at {@code nowMs}: how long the locked spell it ends lasted, or -1 if there was none. */
  synchronized long wrote(long nowMs) {
    long lasted = locked ? nowMs - since : -1;
    locked = false;
    probing = false;
    return lasted;
  }

  /** A batch that tried history ended without saying whether history is free (it had no history row, or an outage): another may try. */
  synchronized void probeEnded() {
    probing = false;
  }

  /** Whether history counts as locked: the last history write that ended timed out. */
  synchronized boolean locked() {
    return locked;
  }
}
