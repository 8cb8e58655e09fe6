package dev.inspection.worker;

import static dev.inspection.config.LogSetup.SLOT;

import dev.inspection.common.Retry;
import dev.inspection.control.TransitionTable;
import dev.inspection.messaging.CollectedAt;
import dev.inspection.metrics.Metrics;
import dev.inspection.state.DerivedState;
import dev.inspection.worker.BatchHandler.Dead;
import dev.inspection.worker.BatchHandler.Handled;
import dev.inspection.worker.BatchHandler.Valid;
import dev.inspection.worker.BatchStore.Committed;
import dev.inspection.worker.BatchStore.Fenced;
import dev.inspection.worker.CommitGroup.SlotCommit;
import dev.inspection.worker.SlotConsumers.Delivery;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes one slot that this worker holds at a given lease epoch, one batch at a time: room in the commit queue
 * ({@link CommitRoom}) → pick ({@link BatchPicker}) → handle ({@link BatchHandler}) → dead-letter ∥ commit ({@link CommitGroup}) → ack
 * ({@link SlotConsumers}) — ack only after commit (INV-19). A graceful {@link #close} (D6, and the old
 * owner's half of a move) cancels the consumers, commits and acks everything the broker sent before its
 * cancel-ok and during the quiet period after it, then closes the channels: a move redelivers nothing.
 *
 * <p>What can go wrong, and what happens:
 * <ul>
 *   <li>lease lost ({@link Fenced}): nothing was written; the channels close, which returns every unacked
 *       delivery to the queue for the new owner; the batch is never retried here; the owner is told;</li>
 *   <li>database outage (commit or device lookup; {@link DbErrors}): the same, then every slot waits on the
 *       {@link DbGate} and consumes again (during a close: the close ends there);</li>
 *   <li>PostgreSQL refuses some results (a data error, D9): the group was split ({@link PoisonSplitter}), the
 *       rest is committed; the refused devices' results are dead-lettered ({@code db_rejected}) and acked after
 *       the broker confirmed them — no pause, no outage;</li>
 *   <li>dead-letter publish fails: those messages stay unacked and come back when the channel closes;</li>
 *   <li>opening the consumers fails: tried again with backoff, or on the next connect if the broker is gone;</li>
 *   <li>connection lost: channels and mailbox are gone (the broker requeues); consumed again on reconnect.</li>
 * </ul>
 */
public final class SlotProcessor {
  private static final Logger log = LoggerFactory.getLogger(SlotProcessor.class);

  /** Where the processor stands; a batch in flight is not a phase (at most one, in any phase). */
  enum Phase { DISCONNECTED, OPENING, CONSUMING, PAUSED_FOR_DATABASE, CLOSING, STOPPED }

  static final TransitionTable<Phase> PHASES = TransitionTable.of("slot processor phase", Phase.class, p -> switch (p) {
    case DISCONNECTED -> List.of(Phase.OPENING, Phase.PAUSED_FOR_DATABASE, Phase.CLOSING, Phase.STOPPED);
    case OPENING -> List.of(Phase.CONSUMING, Phase.DISCONNECTED, Phase.PAUSED_FOR_DATABASE, Phase.CLOSING, Phase.STOPPED);
    case CONSUMING -> List.of(Phase.DISCONNECTED, Phase.PAUSED_FOR_DATABASE, Phase.CLOSING, Phase.STOPPED);
    case PAUSED_FOR_DATABASE -> List.of(Phase.DISCONNECTED, Phase.CLOSING, Phase.STOPPED);
    case CLOSING -> List.of(Phase.STOPPED);
    case STOPPED -> List.of();
  });

  /** What the processor tells its owner. */
  public interface Listener {
    void fenced(int slot, long epoch, Fenced f);
  }

  private final Vertx vertx;
  private final int slot;
  private final long epoch;
  private final SlotServices services;
  private final Metrics metrics;
  private final SlotConsumers consumers;
  private final BatchPicker<Delivery> mailbox;
  private final BatchHandler handler;
  private final Retry reopen;

  private Phase phase = Phase.DISCONNECTED;
  private boolean batchInFlight;
  private long openings;
  private long lingerTimer = -1;
  private long quietTimer = -1;
  private long lastBrokenNanos;
  /** Set by {@link #close}: the consumers are cancelled; completed once everything is committed and acked (or the close is cut short). */
  private boolean cancelled;
  private Promise<Void> settled;
  private Future<Void> closed = Future.succeededFuture();
  private final SlotStats stats;
  private final SlotTurn turn;

  public SlotProcessor(Vertx vertx, int slot, long epoch, SlotMemory memory, SlotSettings settings, SlotServices services) {
    this.vertx = vertx;
    this.slot = slot;
    this.epoch = epoch;
    this.services = services;
    this.metrics = services.metrics();
    this.consumers = new SlotConsumers(vertx, slot, epoch, services.workerId(), services.topology(),
        settings.prefetch(), services.broker(), services.acks(), services.opens(), metrics, this::accept).onBroken(this::channelBroken);
    this.mailbox = new BatchPicker<Delivery>(settings.batchMax(), settings.lingerMs(), settings.lanes(), services.clock()).firstBatch(1)
        .holding(d -> settings.windows().windowMs(d.body())); // first batch: 1 message (a v3 one may carry hundreds); pushed frames: their window
    this.handler = new BatchHandler(new ResultGuard(slot, services.slotMap(), settings.maxFutureSkewMs(), memory.mapVersion()), services.clock(),
        settings.limits(), services.topology(), services.devices(), services.rules(), settings.histories(), settings.layout(),
        memory.snapshots());
    this.reopen = new Retry(vertx, settings.reopen(), log);
    this.stats = new SlotStats(metrics);
    this.turn = new SlotTurn(services.store(), this);
    metrics.fenced(slot, 0); // at zero from the takeover on, so an alert on their rate sees the series before the first event
    metrics.committed(slot, 0);
  }

  public int slot() {
    return slot;
  }

  public long epoch() {
    return epoch;
  }

  /** Committed messages, lag and batch time of this slot, for its weight in the heartbeat. */
  public SlotStats stats() {
    return stats;
  }

  /** A device's derived state as this owner holds it (for tests and the API). */
  public DerivedState derived(String deviceId) {
    return handler.derived(deviceId);
  }

  public int mailboxSize() {
    return mailbox.size();
  }

  boolean quiet() {
    return phase == Phase.CONSUMING && consumers.quiet();
  }

  private void to(Phase next) {
    Phase from = phase;
    phase = PHASES.check(from, next);
    log.atDebug().addKeyValue(SLOT, slot).log("slot {} (epoch {}): {} -> {}", slot, epoch, from, next);
  }

  /** Starts consuming if the slot is not consumed yet and the worker has a connection; call again after every (re)connect. */
  public void open() {
    if (phase != Phase.DISCONNECTED || !consumers.brokerReady() || !consumers.lastOpen().isComplete()) return;
    to(Phase.OPENING);
    long attempt = ++openings;
    reopen.until("start consuming slot " + slot, consumers::open, e -> !consumers.brokerReady(), () -> attempt != openings || phase != Phase.OPENING)
        .onComplete(ar -> opened(attempt, ar));
  }

  private void opened(long attempt, AsyncResult<Void> ar) {
    if (attempt != openings) return; // a newer open() took over
    if (phase == Phase.OPENING) {
      to(ar.succeeded() ? Phase.CONSUMING : Phase.DISCONNECTED); // failed: the broker is gone, the next connect opens again
      return;
    }
    // paused, stopped or disconnected meanwhile: what this open made must not consume (a close cancels it itself)
    if (phase != Phase.CLOSING) consumers.close();
    if (phase == Phase.DISCONNECTED) open();
  }

  /**
   * The broker closed one of this slot's channels, or cancelled a consumer, while the connection lives on — seen in a
   * 3-node cluster drill: channels closed on {@code PRECONDITION_FAILED - unknown delivery tag} after queue leaders
   * moved, and their lanes stayed without a consumer while the slot's lease said ACTIVE, until the slot moved. All of
   * the slot's channels close (what they hold unacked goes back to the queues; a batch in flight acks nothing) and
   * its consumers open again; a second break within 5 s waits a second first.
   */
  private void channelBroken(String why) {
    if (phase != Phase.CONSUMING && phase != Phase.OPENING) return; // closing, paused, stopped or disconnected: handled there
    long now = System.nanoTime();
    boolean again = now - lastBrokenNanos < 5_000_000_000L;
    lastBrokenNanos = now;
    metrics.channelsBroken(slot);
    log.atWarn().addKeyValue(SLOT, slot).log("slot {} (epoch {}): {}; its channels close and its consumers open again", slot, epoch, why);
    consumers.close();
    clearMailbox();
    to(Phase.DISCONNECTED);
    if (again) vertx.setTimer(1000, t -> open());
    else open();
  }

  /** The connection is gone: so are the channels and every unacked delivery (the broker requeues them). */
  public void connectionLost() {
    consumers.lost();
    clearMailbox();
    if (phase == Phase.OPENING || phase == Phase.CONSUMING) to(Phase.DISCONNECTED);
  }

  /** Every delivery is gone (the broker has them back, or they go back when the channels close): nothing waits for room. */
  private void clearMailbox() {
    mailbox.clear();
    turn.cancel();
  }

  private void accept(Delivery d) {
    if (phase != Phase.OPENING && phase != Phase.CONSUMING && phase != Phase.CLOSING) return; // its channel is closing: the broker requeues it
    mailbox.add(d.priority(), d, CollectedAt.firstMs(d.body(), services.clock().millis()));
    stats.delivered(slot);
    next();
  }

  /** Starts the next batch when one is due, or waits for the linger; when closing and nothing is left, closes once quiet. */
  private void next() {
    if (batchInFlight || (phase != Phase.OPENING && phase != Phase.CONSUMING && phase != Phase.CLOSING)) return;
    long due = mailbox.dueInMs(phase == Phase.CLOSING);
    if (due == 0) {
      if (turn.admits(phase == Phase.CLOSING, mailbox.hasHigh(), this::roomFreed)) start(false);
      else if (mailbox.hasHigh()) start(true); // the high lane goes ahead of the full queue; the slot keeps its place in line for the rest
    } else if (due > 0 && lingerTimer < 0) {
      lingerTimer = vertx.setTimer(due, t -> {
        lingerTimer = -1;
        next();
      });
    } else if (due < 0 && phase == Phase.CLOSING) {
      closeWhenQuiet();
    }
    if (due > 0 && mailbox.laneSize() > 0) services.store().lingering(this, () -> {
      if (mailbox.laneSize() > 0) start(false); // the merge window keeps its own time
    });
  }

  /** The commit queue has room ({@link CommitRoom}): false while a batch of this slot is in flight, which keeps its place in line. */
  private boolean roomFreed() {
    if (batchInFlight) return false;
    if (mailbox.isEmpty()) turn.cancel(); // the high lane went ahead with all there was
    else start(false);
    return true;
  }

  /**
   * Also run by a commit that takes this slot along ({@link CommitGroup#lingering}: the lanes' batch goes now, not after its linger); a
   * slot closed or paused since, or with nothing left in its lanes, does nothing (a stale registration goes with the next take-along).
   * {@code highOnly}: the high lane alone, ahead of a full commit queue.
   */
  private void start(boolean highOnly) {
    if (batchInFlight || (phase != Phase.OPENING && phase != Phase.CONSUMING && phase != Phase.CLOSING) || mailbox.isEmpty()) return;
    if (lingerTimer >= 0) vertx.cancelTimer(lingerTimer);
    lingerTimer = -1;
    services.store().notLingering(this);
    if (!highOnly) services.store().forget(this); // taken along while it waited for room
    BatchPicker.Take<Delivery> take = highOnly ? mailbox.pickHigh() : mailbox.pick();
    take.lanes().forEach((lane, t) -> metrics.laneTaken(lane.wire, t.taken(), t.oldestAgeMs(), t.starved()));
    run(take.batch(), highOnly);
  }

  /** One batch: handle → (dead-letter ∥ commit) → settle every delivery of it on the broker at once. */
  private void run(List<Delivery> batch, boolean ahead) {
    batchInFlight = true;
    long start = turn.began(ahead);
    BatchHandler.Parsed<Delivery> parsed = handler.parse(batch);
    services.store().reserve(this, parsed.valid().size());
    Future<Handled<Delivery>> handled = handler.plan(parsed);
    Future<Void> dead = handled.transform(ar -> setAside(ar.succeeded() ? ar.result().dead() : parsed.dead())); // parse failures even when the lookup fails
    Future<SlotCommit> commit = handled.compose(h -> commit(h, ahead));
    // results PostgreSQL refused (D9): set aside after the rest committed, acked once the broker confirmed them
    Future<List<Dead<Delivery>>> refused = commit.map(c -> handler.refused(handled.result().toCommit(), c.refused()));
    Future<Void> refusedDead = refused.compose(this::setAside);
    Future.join(dead, commit, refusedDead).onComplete(ar -> {
      services.store().release(this); // not submitted (nothing to write, or a failure first): its reservation goes
      List<Dead<Delivery>> deadOnes = handled.succeeded() ? handled.result().dead() : parsed.dead();
      boolean committed = commit.succeeded() && commit.result().outcome() instanceof Committed;
      if (dead.failed()) {
        log.atWarn().addKeyValue(SLOT, slot).log("slot {}: cannot dead-letter {} message(s) ({}); they will be delivered again", slot, deadOnes.size(), dead.cause().getMessage());
      }
      // committed: channels stay open, what could not be set aside goes back now; else they close. A v3 delivery is acked once all its results are
      Map<Delivery, AckPlan.Outcome> outcomes = new IdentityHashMap<>();
      AckPlan.Outcome deadOutcome = dead.succeeded() ? AckPlan.Outcome.ACK : committed ? AckPlan.Outcome.REQUEUE : AckPlan.Outcome.LEAVE;
      deadOnes.forEach(d -> outcomes.merge(d.delivery(), deadOutcome, AckPlan.Outcome::worse));
      List<Dead<Delivery>> refusedOnes = committed ? refused.result() : List.of();
      AckPlan.Outcome refusedOutcome = refusedDead.succeeded() ? AckPlan.Outcome.ACK : AckPlan.Outcome.REQUEUE;
      refusedOnes.forEach(d -> outcomes.merge(d.delivery(), refusedOutcome, AckPlan.Outcome::worse));
      Set<String> notWritten = committed ? commit.result().refused().keySet() : Set.of();
      List<Valid<Delivery>> done = committed
          ? handled.result().toCommit().stream().filter(v -> !notWritten.contains(v.envelope().deviceId())).toList() : List.of();
      done.forEach(v -> outcomes.merge(v.delivery(), AckPlan.Outcome.ACK, AckPlan.Outcome::worse));
      if (!committed) parsed.valid().forEach(v -> outcomes.merge(v.delivery(), AckPlan.Outcome.LEAVE, AckPlan.Outcome::worse)); // not written: not acked
      Future<Void> settled = consumers.settle(Stream.concat(batch.stream().map(d -> new AckPlan.Settle<>(d.channel(), d.tag(), outcomes.getOrDefault(d,
          AckPlan.Outcome.LEAVE))), mailbox.held().stream().map(d -> new AckPlan.Settle<>(d.channel(), d.tag(), AckPlan.Outcome.LEAVE))).toList()); // no multiple ack over a held one
      if (dead.succeeded()) countDead(deadOnes);
      if (refusedDead.succeeded()) countDead(refusedOnes);
      else if (!refusedOnes.isEmpty()) {
        log.atWarn().addKeyValue(SLOT, slot).log("slot {}: cannot dead-letter {} refused result(s) ({}); requeued", slot, refusedOnes.size(), refusedDead.cause().getMessage());
      }
      if (committed) {
        batchInFlight = false;
        if (!done.isEmpty()) {
          stats.committed(done.stream().map(Valid::envelope).toList(), System.nanoTime() - start, services.clock().millis());
          settled.onSuccess(v -> metrics.committed(slot, done.size()));
        }
        next();
        return;
      }
      // the channels close on both paths below: settle what was set aside before they do
      settled.onComplete(s -> {
        batchInFlight = false;
        if (commit.failed()) {
          metrics.dbErrors();
          pauseForDatabase(commit.cause());
        } else {
          fenced((Fenced) commit.result().outcome(), handled.result().toCommit().size());
        }
      });
    });
  }

  private Future<Void> setAside(List<Dead<Delivery>> dead) {
    return dead.isEmpty() ? Future.succeededFuture() : services.deadLetters().publish(dead.stream().map(Dead::letter).toList());
  }

  private void countDead(List<Dead<Delivery>> dead) {
    dead.forEach(d -> {
      metrics.deadLettered(d.letter().reason());
      (d.letter().forwardTo() == null ? log.atWarn() : log.atDebug()).addKeyValue(SLOT, slot).log("slot {}: set aside a message ({}): {}", slot, d.letter().reason(), d.letter().detail());
    });
  }

  private Future<SlotCommit> commit(Handled<Delivery> h, boolean ahead) {
    if (h.plan() == null) return Future.succeededFuture(new SlotCommit(new Committed(0, 0), Map.of()));
    return services.store().submit(this, slot, epoch, h.plan(), ahead).map(out -> {
      if (out.outcome() instanceof Committed) handler.committed(PoisonSplit.without(h.plan(), out.refused().keySet()));
      return out;
    });
  }

  private void fenced(Fenced f, int batchSize) {
    metrics.fenced(slot, batchSize);
    log.atWarn().addKeyValue(SLOT, slot).log("slot {}: lease moved (now owner={} epoch={}, mine epoch={}); batch of {} rolled back, consumers cancelled",
        slot, f.owner(), f.epoch(), epoch, batchSize);
    abort();
    services.listener().fenced(slot, epoch, f);
  }

  private void pauseForDatabase(Throwable cause) {
    log.atWarn().addKeyValue(SLOT, slot).log("slot {}: batch failed on a database error ({}); requeued, waiting for PostgreSQL", slot, cause.getMessage());
    Future<Void> healthy = services.gate().failed(cause);
    if (phase == Phase.STOPPED || phase == Phase.PAUSED_FOR_DATABASE) return;
    consumers.close();
    clearMailbox();
    if (phase == Phase.CLOSING) {
      settled.tryComplete(); // what was not acked goes back to the queue
      return;
    }
    to(Phase.PAUSED_FOR_DATABASE);
    healthy.onSuccess(v -> {
      if (phase != Phase.PAUSED_FOR_DATABASE) return;
      to(Phase.DISCONNECTED);
      open();
    });
  }

  /** Lease lost: stop at once; everything unacked goes back to the queue. */
  public void abort() {
    if (phase == Phase.STOPPED) return;
    to(Phase.STOPPED);
    consumers.close();
    clearMailbox();
    if (settled != null) settled.tryComplete();
  }

  /**
   * Graceful stop (D6, and the old owner's half of a move): cancel the consumers, keep what the broker
   * sent before its cancel-ok, commit and ack all of it, then close the channels. Nothing is left unacked,
   * so a move causes no redelivery.
   */
  public Future<Void> close() {
    if (phase == Phase.CLOSING || phase == Phase.STOPPED) return closed;
    to(Phase.CLOSING);
    settled = Promise.promise();
    // a move can arrive while this slot's channels are still being opened: cancel them once they exist
    consumers.lastOpen().onComplete(o -> consumers.cancel().onComplete(c -> {
      cancelled = true;
      next(); // every delivery is in the mailbox now: commit it all
    }));
    closed = settled.future().transform(ar -> consumers.acked()).transform(ar -> {
      if (phase == Phase.CLOSING) to(Phase.STOPPED);
      consumers.close();
      clearMailbox();
      return Future.<Void>succeededFuture();
    });
    return closed;
  }

  /** Closing, cancelled, nothing left and no batch in flight: done once no delivery arrived for the quiet period. */
  private void closeWhenQuiet() {
    if (phase != Phase.CLOSING || !cancelled || batchInFlight || !mailbox.isEmpty() || settled.future().isComplete()) return;
    long wait = consumers.quietRemainingMs();
    if (wait == 0) {
      settled.tryComplete();
    } else if (quietTimer < 0) {
      quietTimer = vertx.setTimer(wait, t -> {
        quietTimer = -1;
        next();
      });
    }
  }
}
