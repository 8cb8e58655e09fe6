package dev.inspection.worker;

import dev.inspection.control.WorkerState;
import dev.inspection.worker.LeaseReconciler.Action;
import dev.inspection.worker.LeaseReconciler.Drop;
import dev.inspection.worker.LeaseReconciler.HandBack;
import dev.inspection.worker.LeaseReconciler.Holding;
import dev.inspection.worker.LeaseReconciler.Lease;
import dev.inspection.worker.LeaseReconciler.Load;
import dev.inspection.worker.LeaseReconciler.Release;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The slots this worker holds, and the hands that carry out {@link LeaseReconciler}'s actions: through
 * the {@link Listener} (load, consume, release, lost) and the {@link LeaseStore} (ACTIVE after a load,
 * DRAINING_OLD after a release). Numbers every read and every local change of a slot (see the reconciler).
 */
final class HeldSlots {
  private static final Logger log = LoggerFactory.getLogger(HeldSlots.class);

  /** What the worker does when its holdings change. */
  interface Listener {
    /**
     * INV-10: load the derived state of the slots' devices (slot → epoch), handing {@code loaded} the slots whose devices
     * are all in as they are (in slot order, a group at a time); completes when every slot has been handed. On a failure
     * the slots not handed yet are not loaded.
     */
    Future<Void> load(Map<Integer, Long> slots, Consumer<Collection<Integer>> loaded);

    void consume(int slot, long epoch);

    /** Graceful: stop consuming, commit and ack what is held, close the channels. */
    Future<Void> release(int slot, long epoch);

    /** Immediate: the lease is gone; everything unacked goes back to the queue. */
    void lost(int slot, long epoch);
  }

  /** Slots a walk activated are announced together, at most this often. */
  static final long ANNOUNCE_GAP_MS = 200;

  private final Vertx vertx;
  private final Clock clock;
  private final LeaseStore store;
  private final Listener listener;
  private final Runnable announce;
  private final Map<Integer, Holding> held = new HashMap<>();
  private final Map<Integer, Long> touched = new HashMap<>();
  private long seq;
  private long lastAnnounced = Long.MIN_VALUE / 2;
  private long announceTimer = -1;

  HeldSlots(Vertx vertx, Clock clock, LeaseStore store, Listener listener, Runnable announce) {
    this.vertx = vertx;
    this.clock = clock;
    this.store = store;
    this.listener = listener;
    this.announce = announce;
  }

  /** The sequence number of a read about to be sent. */
  long newRead() {
    return ++seq;
  }

  /** Slots consumed (or being loaded or released) at their epochs. */
  Map<Integer, Long> epochs() {
    Map<Integer, Long> out = new HashMap<>();
    held.forEach((s, h) -> out.put(s, h.epoch()));
    return out;
  }

  int count() {
    return held.size();
  }

  /** Follows one read of the leases, sent when {@link #newRead()} answered {@code readSeq}. */
  void reconcile(List<Lease> leases, long readSeq, WorkerState state, boolean stopping) {
    apply(LeaseReconciler.reconcile(new LeaseReconciler.Read(leases, readSeq),
        new LeaseReconciler.Local(Map.copyOf(held), Map.copyOf(touched), state, stopping)));
  }

  /** A batch found the lease gone: forget the slot now, without waiting for the next read. */
  void forget(int slot, long epoch) {
    Holding h = held.get(slot);
    if (h != null && h.epoch() == epoch) drop(slot, h);
  }

  /** Stops every slot at once (everything unacked goes back to the queue). */
  void dropAll() {
    for (Map.Entry<Integer, Holding> e : new ArrayList<>(held.entrySet())) drop(e.getKey(), e.getValue());
  }

  /** Whatever the leader did not move in time: release it here (commit, ack, DRAINING_OLD) within the deadline. */
  Future<Void> releaseRemaining(long deadlineMs) {
    List<Future<Void>> all = apply(LeaseReconciler.releaseAll(Map.copyOf(held)));
    long left = Math.max(1, deadlineMs - clock.millis());
    return Future.join(all).timeout(left, TimeUnit.MILLISECONDS).<Void>mapEmpty().recover(e -> {
      log.warn("worker {}: {} slot(s) did not finish releasing in time; their unacked messages go back to the queue", store.workerId(), held.size());
      dropAll();
      return Future.succeededFuture();
    });
  }

  /** Completes when every held slot is gone, or when nothing moved for {@code stallMs} (no leader?), or at the deadline. */
  Future<Void> awaitHandover(long deadlineMs, long stallMs) {
    Promise<Void> done = Promise.promise();
    long[] lastChange = {clock.millis()};
    int[] lastCount = {held.size()};
    long[] timer = {-1};
    timer[0] = vertx.setPeriodic(50, t -> {
      long now = clock.millis();
      if (held.size() != lastCount[0]) {
        lastCount[0] = held.size();
        lastChange[0] = now;
      }
      if (held.isEmpty() || now >= deadlineMs || now - lastChange[0] >= stallMs) {
        vertx.cancelTimer(timer[0]);
        done.tryComplete();
      }
    });
    return done.future();
  }

  /** Takes the holdings the reconciler computed and carries out its actions; the futures of the hand-backs. */
  private List<Future<Void>> apply(LeaseReconciler.Result r) {
    held.clear();
    held.putAll(r.holdings());
    List<Future<Void>> pending = new ArrayList<>();
    Map<Integer, Holding> loads = new TreeMap<>();
    for (Action a : r.actions()) {
      int slot = a.slot();
      if (a instanceof HandBack) {
        pending.add(handBack(slot, a.epoch()));
        continue;
      }
      touch(slot);
      if (a instanceof Drop) {
        listener.lost(slot, a.epoch());
      } else if (a instanceof Load) {
        loads.put(slot, held.get(slot));
      } else if (a instanceof Release) {
        pending.add(release(slot, held.get(slot)));
      }
    }
    // the slots of one read load in one walk (one query per page for all of them; a failover hands a survivor a hundred
    // slots at once), each slot consuming once its own pages are in
    if (!loads.isEmpty()) load(loads);
    return pending;
  }

  private void touch(int slot) {
    touched.put(slot, ++seq);
  }

  /**
   * INV-10 for the slots taken in one read: their derived state in one walk; each group of slots whose devices
   * are in goes ACTIVE in one statement, then each one still held at the same holding consumes. A slot the lease moved
   * away from meanwhile, a group whose activation failed, or the slots a failed load had not reached are dropped: the
   * next read decides again.
   */
  private void load(Map<Integer, Holding> walk) {
    long start = System.nanoTime();
    Map<Integer, Long> epochs = new TreeMap<>();
    walk.forEach((slot, h) -> epochs.put(slot, h.epoch()));
    Set<Integer> waiting = new TreeSet<>(walk.keySet());
    listener.load(epochs, loaded -> {
      waiting.removeAll(loaded);
      activate(loaded, walk, start);
    }).onComplete(ar -> {
      if (waiting.isEmpty()) return;
      // a failed page, or (never expected) a slot the load did not hand over: not loaded, so not consumed
      log.warn("{} slot(s): cannot load their derived state ({}); will retry", waiting.size(),
          ar.failed() ? ar.cause().getMessage() : "the load ended without them");
      for (int slot : waiting) {
        Holding h = walk.get(slot);
        if (held.get(slot) == h) drop(slot, h);
      }
    });
  }

  /** The loaded slots still held at the same holding go ACTIVE in one statement and consume. */
  private void activate(Collection<Integer> loaded, Map<Integer, Holding> walk, long start) {
    Map<Integer, Holding> group = new TreeMap<>();
    for (int slot : loaded) {
      Holding h = walk.get(slot);
      if (h != null && held.get(slot) == h) group.put(slot, h); // else lost meanwhile (a slot dropped and taken again is another holding)
    }
    if (group.isEmpty()) return;
    Map<Integer, Long> epochs = new TreeMap<>();
    group.forEach((slot, h) -> epochs.put(slot, h.epoch()));
    store.activate(epochs, "loaded in " + (System.nanoTime() - start) / 1_000_000 + " ms (a walk of " + walk.size() + " slots)").onComplete(ar -> {
      boolean any = false;
      for (Map.Entry<Integer, Holding> e : group.entrySet()) {
        int slot = e.getKey();
        Holding h = e.getValue();
        if (held.get(slot) != h) continue;
        if (ar.succeeded() && ar.result().contains(slot)) {
          held.put(slot, h.consuming());
          touch(slot);
          listener.consume(slot, h.epoch());
          any = true;
        } else {
          drop(slot, h); // the lease moved while loading, or the database failed
        }
      }
      if (ar.failed()) log.warn("{} slot(s): cannot mark them ACTIVE ({}); will retry", group.size(), ar.cause().getMessage());
      if (any) announceLoaded();
    });
  }

  /**
   * A walk activates its slots a group at a time (256 in a survivor's takeover): the scheduler and the other workers hear
   * of them at most every {@link #ANNOUNCE_GAP_MS}, each announcement covering every slot activated before it.
   */
  private void announceLoaded() {
    if (announceTimer >= 0) return;
    long wait = lastAnnounced + ANNOUNCE_GAP_MS - clock.millis();
    if (wait <= 0) {
      lastAnnounced = clock.millis();
      announce.run();
    } else {
      announceTimer = vertx.setTimer(wait, t -> {
        announceTimer = -1;
        lastAnnounced = clock.millis();
        announce.run();
      });
    }
  }

  /** Graceful: the slot stops, commits and acks what it holds, then is marked DRAINING_OLD. */
  private Future<Void> release(int slot, Holding h) {
    return listener.release(slot, h.epoch()).eventually(() -> {
      if (held.get(slot) == h) held.remove(slot);
      touch(slot);
      return handBack(slot, h.epoch());
    });
  }

  /** The old owner's half of a move: everything it held is committed and acked; the leader may hand the slot on. */
  private Future<Void> handBack(int slot, long epoch) {
    return store.released(slot, epoch).map(done -> {
      if (done) announce.run();
      return (Void) null;
    }).onFailure(e -> log.warn("slot {}: cannot mark it released ({}); the leader will fence it after its move timeout", slot, e.getMessage()));
  }

  /** Stops a slot at once (everything unacked goes back to the queue) and remembers the change. */
  private void drop(int slot, Holding h) {
    held.remove(slot);
    touch(slot);
    listener.lost(slot, h.epoch());
  }
}
