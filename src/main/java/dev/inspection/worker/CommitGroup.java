package dev.inspection.worker;

import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import dev.inspection.metrics.Metrics;
import dev.inspection.worker.BatchStore.Outcome;
import dev.inspection.worker.BatchStore.Part;
import dev.inspection.worker.DbErrors.DbError;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Group commit across slots: while {@code maxConcurrent} transactions are in flight, the batches that
 * slots hand in wait here and go together into the next transaction (up to {@code maxRows} messages).
 * At 256 slots each slot's own batch is small; one fsync for many of them is what keeps the commit
 * latency flat. Fencing stays per slot: the transaction checks every slot's lease and writes only the
 * slots still owned at their epoch. A group PostgreSQL refuses with a data error is split by
 * {@link PoisonSplitter} (D9): one slot's poison result never fails its neighbours. With the DB-degraded
 * write mode on ({@link #degradedMode}), every group commit is measured by the {@link DegradedMonitor}, and while
 * it is DEGRADED a group is committed without its non-critical history rows ({@link Spill}), which are published
 * to the back-fill queue before the slots hear that they committed (so their deliveries are acked only after
 * both). A group whose history statement waited out {@code worker.degraded.history.lock.timeout.ms} for a lock is written again at
 * once without any history row, whatever the mode, and so are the groups after it until history answers ({@link HistoryLock}). The queue
 * holds about one round of transactions: a slot starts its next batch only while there is room
 * ({@link CommitRoom}), and a slot's critical results alone may go ahead of a full queue. Runs on the worker's event loop.
 */
public final class CommitGroup {
  private static final Logger log = LoggerFactory.getLogger(CommitGroup.class);

  /**
   * One slot's result: the outcome and, when PostgreSQL refused some of its devices (D9), those devices with
   * the error — their results were not written (the rest of the slot's batch was, when the outcome is
   * {@link BatchStore.Committed}).
   */
  public record SlotCommit(Outcome outcome, Map<String, DbError> refused) {}

  private record Waiting(Part part, Promise<SlotCommit> result) {}

  /** What a group's transaction committed, and the history rows it held back (null: none). */
  private record Written(Map<Integer, SlotCommit> outcomes, Spill.Degraded held) {}

  private final PoisonSplitter splitter;
  private final Metrics metrics;
  /** The DB-degraded write mode (null: off): measures every group commit and, while degraded, spills non-critical history. */
  private DegradedMonitor degraded;
  private SpillPublisher spill;
  private Function<List<Spill.Batch>, Future<Integer>> writeThrough;
  /** Whether history takes rows now (null: the history statement waits for a lock as long as it lasts). */
  private HistoryLock historyLock;
  private final int maxConcurrent;
  private final int maxRows;
  private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
  private int inFlight;
  /** Admission to {@link #waiting}: one round of transactions ({@code maxRows} x {@code maxConcurrent}) queued and being planned. */
  private final CommitRoom room;
  /** Lingering slots' {@code goNow}, by owner ({@link #lingering}); in the order they began to linger. */
  private final Map<Object, Runnable> lingering = new LinkedHashMap<>();
  private final boolean takeAlongOn;
  private boolean takingAlong;
  private Clock clock = Clock.systemUTC();

  /** Settings of the retries and the split: {@link PoisonSplitter.Settings#from}. */
  public CommitGroup(Vertx vertx, BatchStore store, int maxConcurrent, int maxRows, Config config, Metrics metrics) {
    this.splitter = new PoisonSplitter(vertx, store::commit, PoisonSplitter.Settings.from(config), metrics);
    this.maxConcurrent = maxConcurrent;
    this.maxRows = maxRows;
    this.metrics = metrics;
    this.takeAlongOn = config.getBool(Keys.WORKER_COMMIT_TAKE_ALONG);
    this.room = new CommitRoom(maxConcurrent * maxRows);
  }

  /**
   * Turns the DB-degraded write mode on: every commit is measured by {@code monitor}; while it is degraded, {@link Spill}
   * applies. {@code writeThrough} ({@link BackFiller#store}) writes held-back rows straight into history and rollups
   * when their spill cannot be published. {@code historyLock} (null: none) is told what the history writes met, and decides
   * whether a group writes its history or spills it all; the store's history statement must then have a lock timeout.
   */
  public CommitGroup degradedMode(DegradedMonitor monitor, SpillPublisher publisher, Function<List<Spill.Batch>, Future<Integer>> writeThrough,
      HistoryLock historyLock, Clock clock) {
    this.clock = clock;
    this.historyLock = historyLock;
    this.degraded = monitor;
    this.spill = publisher;
    this.writeThrough = writeThrough;
    return this;
  }

  /**
   * {@code owner}'s batch for a transaction: it joins the queue (its reservation, {@link #reserve}, becomes queued results) and
   * goes with the next transaction that has room for it; {@code ahead}: a slot's critical results alone (started while the queue
   * was full), first into the next transaction.
   */
  public Future<SlotCommit> submit(Object owner, int slot, long epoch, StatePlanner.Plan plan, boolean ahead) {
    Promise<SlotCommit> p = Promise.promise();
    Part part = new Part(slot, epoch, plan);
    if (ahead) waiting.addFirst(new Waiting(part, p));
    else waiting.add(new Waiting(part, p));
    room.queued(owner, part.size());
    if (takingAlong) return p.future(); // the submit that takes this slot along flushes it
    if (takesAlong(takeAlongOn, inFlight, lingering.size())) takeAlong();
    flush();
    room.wake();
    return p.future();
  }

  /**
   * Whether {@code owner} may start its next batch now ({@link CommitRoom}); if not, it waits in line and {@code go} is asked
   * once there is room (the slots with critical results first); false from it keeps the owner's place.
   */
  public boolean admits(Object owner, boolean hasCritical, BooleanSupplier go) {
    return room.admits(owner, hasCritical, go);
  }

  /** {@code owner} picked and parsed a batch of {@code results}: they count against the room until submitted or released. */
  public void reserve(Object owner, int results) {
    room.reserve(owner, results);
  }

  /** {@code owner}'s batch ended (whether it was submitted or not) or it closed: no reservation and no wait of it is left. */
  public void release(Object owner) {
    room.release(owner);
    room.wake();
  }

  /** {@code owner} closed: it no longer waits for room. */
  public void forget(Object owner) {
    room.forget(owner);
  }

  /**
   * A slot's batch lingers (waits {@code worker.batch.linger.ms} to fill): {@code goNow} starts it at once. With the take-along on
   * ({@code worker.commit.take.along}), a commit that starts while none is in flight runs every lingering slot's {@code goNow} first,
   * so their batches join its transaction: at a low rate, where a fleet's results spread over the slots one or two at a time, one
   * transaction instead of one per slot, and no batch waits out its linger while the database has nothing else to do. A
   * {@code goNow} that finds nothing to start does nothing. {@code owner}: the slot's processor (a new one replaces it).
   */
  public void lingering(Object owner, Runnable goNow) {
    if (takeAlongOn) lingering.put(owner, goNow);
  }

  /**
   * At most this many lingering slots are taken along: more means results reach most slots every linger (at 256 slots, a few
   * hundred results a second and up), where the batches fill by themselves, and taking them all along at once made one burst
   * of them: at 8,141 results/s it added a third of a second to the p99 lag (README, "Benchmark", 2026-12-05).
   */
  static final int TAKE_ALONG_MAX_SLOTS = 32;

  /** Whether a commit starting now takes the lingering slots along (pure). */
  static boolean takesAlong(boolean on, int inFlight, int lingeringSlots) {
    return on && inFlight == 0 && lingeringSlots > 0 && lingeringSlots <= TAKE_ALONG_MAX_SLOTS;
  }

  /** The owner's batch started, or it closed: nothing of it lingers. */
  public void notLingering(Object owner) {
    lingering.remove(owner);
  }

  private void takeAlong() {
    List<Runnable> go = new ArrayList<>(lingering.values());
    lingering.clear();
    takingAlong = true;
    try {
      for (Runnable r : go) {
        try {
          r.run();
        } catch (RuntimeException e) {
          log.warn("a lingering slot batch could not be taken along ({}); it goes after its linger", e.toString());
        }
      }
    } finally {
      takingAlong = false;
    }
  }

  /**
   * The spill could not be published: rather than requeue at once — each requeue spends one of the message's
   * {@code queue.delivery.limit} deliveries, and a broker that refuses spills would dead-letter good results within
   * seconds — the held-back rows are written now, each slot batch in its own transaction. Fails only if that fails too.
   */
  private Future<Void> writeThrough(List<Spill.Batch> out, Throwable spillFailure) {
    int n = out.stream().mapToInt(b -> b.rows().size()).sum();
    log.warn("cannot spill {} history row(s) to the back-fill queue ({}); writing them into history now instead", n, spillFailure.getMessage());
    metrics.spillWrittenThrough(n);
    return writeThrough.apply(out).<Void>mapEmpty().recover(e -> Future.failedFuture(new IllegalStateException(
        "spill failed (" + spillFailure.getMessage() + ") and writing the rows instead failed (" + e.getMessage() + ")", e)));
  }

  /**
   * Commits one group: with its history rows, without the non-critical ones while the degraded mode is on, or without any while history is
   * locked ({@link HistoryLock}). A group whose history write waited out the lock timeout is written again at once without any history row.
   */
  private Future<Written> write(List<Part> parts) {
    boolean history = historyLock == null || historyLock.writesHistory(clock.millis());
    Spill.Degraded held = !history ? Spill.splitAll(parts) : degraded != null && degraded.degraded() ? Spill.split(parts) : null;
    List<Part> now = held == null ? parts : held.parts();
    Future<Written> first = splitter.commit(now).map(o -> new Written(o, held));
    if (historyLock == null || !history) return first;
    boolean triesHistory = now.stream().anyMatch(p -> p.size() > 0);
    return first.transform(ar -> {
      if (ar.succeeded()) {
        if (!triesHistory) historyLock.probeEnded();
        else historyAnswers(historyLock.wrote(clock.millis()));
        return Future.succeededFuture(ar.result());
      }
      if (!BatchStore.historyLocked(ar.cause())) {
        historyLock.probeEnded();
        return Future.failedFuture(ar.cause());
      }
      Spill.Degraded all = Spill.splitAll(parts);
      if (historyLock.timedOut(clock.millis())) {
        log.warn("{}; writing current status, derived state and alerts without waiting, and spilling every history row (critical ones too) to the"
            + " back-fill queue until history takes rows again (one batch tries every {} s; worker_history_locked)", ar.cause().getMessage(),
            HistoryLock.PROBE_AFTER_MS / 1000);
      }
      return splitter.commit(all.parts()).map(o -> new Written(o, all));
    });
  }

  /** Logs the end of a locked spell of history ({@link HistoryLock#wrote}: -1 = none ended). */
  static void historyAnswers(long lockedMs) {
    if (lockedMs >= 0) {
      log.info("history takes rows again after {} ms locked; the back-fill writes what was spilled meanwhile (worker_backfill_queue_depth)", lockedMs);
    }
  }

  private void flush() {
    while (inFlight < maxConcurrent && !waiting.isEmpty()) {
      List<Waiting> group = new ArrayList<>();
      int rows = 0;
      while (!waiting.isEmpty() && (group.isEmpty() || rows + waiting.peek().part().size() <= maxRows)) {
        Waiting w = waiting.poll();
        rows += w.part().size();
        room.dequeued(w.part().size());
        group.add(w);
      }
      inFlight++;
      List<Part> parts = group.stream().map(Waiting::part).toList();
      long token = degraded == null ? -1 : degraded.started();
      write(parts).onComplete(ar -> {
        if (degraded != null) degraded.finished(token, ar.succeeded());
        // degraded: the deliveries may be acked only once the held-back rows are confirmed on the back-fill queue too
        Spill.Degraded held = ar.succeeded() ? ar.result().held() : null;
        List<Spill.Batch> out = held == null ? List.of() : Spill.toPublish(held, ar.result().outcomes(), clock.millis());
        Future<Void> spilled = out.isEmpty() ? Future.succeededFuture() : spill.publish(out).onSuccess(v -> out.forEach(b -> metrics.spilled(b.rows().size())))
            .recover(e -> writeThrough(out, e));
        spilled.onComplete(sp -> {
          inFlight--;
          for (Waiting w : group) {
            if (ar.failed()) w.result().fail(ar.cause());
            else if (sp.failed() && held.spill().containsKey(w.part().slot())) w.result().fail(new IllegalStateException(
                "committed, but neither the spill to the back-fill queue nor the history write instead succeeded (" + sp.cause().getMessage()
                    + "); requeued to be written again", sp.cause()));
            else w.result().complete(ar.result().outcomes().get(w.part().slot()));
          }
          flush();
          room.wake();
        });
      });
    }
  }
}
