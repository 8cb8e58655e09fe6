package dev.inspection.outbox;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import dev.inspection.messaging.ResultBatch;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves outbox rows to RabbitMQ with publisher confirms. A row is marked confirmed only on the broker's
 * ack; a nack (full queue: {@code reject-publish}), a return (unroutable) or a lost connection leaves it
 * unconfirmed, and the replayer publishes it again later. Rows go out in id order (which is seq order per
 * device), critical devices' rows first while the publisher is behind ({@link CriticalAhead}); duplicates after a replay are harmless because every downstream effect is idempotent (D4).
 *
 * <p>Runs on its owner's context; publishing happens on one dedicated thread so delivery tags and
 * publishes stay in step.
 */
public final class OutboxPublisher {
  private static final Logger log = LoggerFactory.getLogger(OutboxPublisher.class);

  /** One published message: the rows it carries (one for v2, several for a v3 batch). */
  private record InFlight(long[] rowIds, String messageId, String routingKey) {}

  /**
   * @param maxInFlight rows published but not yet confirmed; beyond it rows wait in the outbox
   * @param replayMinAgeMs an unconfirmed row is published again only once it is this old
   * @param channels AMQP channels to publish on (a slot always uses the same one)
   * @param batchMax most results in one message: 1 publishes schema v2 (one result each), more publishes
   *     the rows of one slot and priority that are waiting together as one v3 batch ({@link ResultBatch})
   * @param batchBytes most bytes of one v3 message
   * @param gatherRows while gathering, a slot's rows go once this many have gathered ({@link SlotGate})
   * @param gatherMs while the fleet is behind, a slot's rows go once the oldest waited this long; 0 never gathers
   * @param busyMs, busyPerS while this probe publishes at least busyPerS results/s, the same for up to busyMs ({@link GatherPolicy})
   */
  public record Settings(int maxInFlight, long replayMinAgeMs, int channels, int batchMax, int batchBytes, int gatherRows, long gatherMs,
      long busyMs, double busyPerS) {
    public static Settings from(Config c) {
      return new Settings(c.getInt(Keys.OUTBOX_MAX_INFLIGHT), c.getLong(Keys.OUTBOX_REPLAY_MIN_AGE_MS), c.getInt(Keys.OUTBOX_PUBLISH_CHANNELS),
          c.getInt(Keys.OUTBOX_PUBLISH_BATCH_MAX), c.getInt(Keys.OUTBOX_PUBLISH_BATCH_BYTES), c.getInt(Keys.OUTBOX_PUBLISH_GATHER_ROWS),
          c.getLong(Keys.OUTBOX_PUBLISH_GATHER_MS), c.getLong(Keys.OUTBOX_PUBLISH_GATHER_BUSY_MS), c.getDouble(Keys.OUTBOX_PUBLISH_GATHER_BUSY_PER_S));
    }
  }

  private final Vertx vertx;
  private final Context context;
  private final Outbox outbox;
  private final Topology topology;
  private final Metrics metrics;
  private final Clock clock;
  private final int maxInFlight;
  private final long replayMinAgeMs;
  private final int batchMax;
  private final int batchBytes;
  private final WorkerExecutor publishThread;

  /** Per publishing channel: delivery tag → row, until the broker settles it. */
  private final List<ConcurrentNavigableMap<Long, InFlight>> inFlight = new ArrayList<>();
  private final Set<Long> inFlightRows = ConcurrentHashMap.newKeySet();
  private final Set<String> returned = ConcurrentHashMap.newKeySet();
  private final List<Long> confirmedToMark = new ArrayList<>();
  /** Per slot and priority: publish at once, or gather behind an unconfirmed message (context only). */
  private final SlotGate gate;
  private final GatherPolicy gatherPolicy;
  private long gatherTimer = -1;
  private long publishedRows;
  private final CriticalAhead ahead;
  private volatile List<Channel> channels;
  private final int channelCount;
  private long cursor;
  private long replayCursor;
  private boolean replayRequested;
  /** The last forward read was full: rows wait above the cursor, so critical ones are read ahead. */
  private boolean behind;
  private boolean pumping;
  private boolean pumpAgain;
  private boolean marking;

  public OutboxPublisher(Vertx vertx, Outbox outbox, Topology topology, Metrics metrics, Clock clock, Settings settings) {
    this.channelCount = Math.max(1, settings.channels());
    for (int i = 0; i < this.channelCount; i++) inFlight.add(new ConcurrentSkipListMap<>());
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
    this.outbox = outbox;
    this.ahead = new CriticalAhead(outbox);
    this.topology = topology;
    this.metrics = metrics;
    this.clock = clock;
    this.maxInFlight = settings.maxInFlight();
    this.replayMinAgeMs = settings.replayMinAgeMs();
    this.batchMax = Math.max(1, settings.batchMax());
    this.batchBytes = settings.batchBytes();
    this.gatherPolicy = new GatherPolicy(settings.gatherMs(), settings.busyMs(), settings.busyPerS());
    this.gate = new SlotGate(Math.min(settings.gatherRows(), this.batchMax), settings.gatherMs());
    this.publishThread = vertx.createSharedWorkerExecutor("outbox-publisher-" + System.identityHashCode(this), 1);
  }

  /** Rows published and not yet settled (confirmed rows count until they are marked in the outbox). */
  public int inFlight() {
    return inFlightRows.size();
  }

  /** A copy of the ids of rows published and not yet settled (never shed: they may be in the broker already). */
  public Set<Long> inFlightRowIds() {
    return Set.copyOf(inFlightRows);
  }

  public boolean connected() {
    List<Channel> chs = channels;
    if (chs == null) return false;
    for (Channel c : chs) if (!c.isOpen()) return false;
    return true;
  }

  /**
   * After every (re)connect: declare the topology, open the confirm channels (several: one broker channel
   * process confirms only so many messages per second), and start from the oldest unconfirmed row.
   */
  public Future<Void> onConnected(Connection conn) {
    return vertx.executeBlocking(() -> ConfirmChannels.open(conn, topology, channelCount, this::settle, returned::add), false).map(chs -> {
      gate.clear();
      inFlight.forEach(Map::clear);
      inFlightRows.clear();
      returned.clear();
      cursor = 0;
      replayCursor = 0;
      replayRequested = false;
      behind = true; // a start or reconnect begins with whatever waits in the outbox
      ahead.reset();
      channels = List.copyOf(chs);
      log.info("outbox publisher connected; replaying unconfirmed rows");
      pump();
      return null;
    });
  }

  /** The connection died: everything in flight is unconfirmed again and will be replayed. */
  public void onLost() {
    channels = null;
    gate.clear();
    inFlight.forEach(Map::clear);
    inFlightRows.clear();
    cursor = 0;
  }

  /**
   * New rows are durable: publish them if there is room, else they wait in the outbox. When nothing waits
   * before them (they follow the forward cursor directly) they are published from memory, without being
   * read back; otherwise the pump reads the outbox in id order as always.
   */
  public void rowsAppended(List<OutboxRow> rows) {
    List<Channel> chs = channels;
    if (!rows.isEmpty() && !pumping && !replayRequested && chs != null && connected() && rows.get(0).id() == cursor + 1
        && maxInFlight - inFlight() >= rows.size()) {
      pumping = true;
      pumpAgain = false;
      cursor = rows.get(rows.size() - 1).id();
      publish(chs, rows).onComplete(ar -> {
        pumping = false;
        if (ar.failed()) log.warn("outbox publish failed: {}", ar.cause().getMessage());
        if (pumpAgain || replayRequested) pump();
      });
      return;
    }
    pump();
  }

  /** Periodic: publish again every unconfirmed row that is old enough and not in flight. */
  public void replay() {
    if (!connected()) return;
    replayRequested = true;
    replayCursor = 0;
    pump();
  }

  /**
   * One loop serves both paths, so a row is never read by both at once: the forward path publishes rows
   * above {@code cursor} (new ones, or everything after a reconnect); the replay path walks rows at or
   * below it that are old enough and not in flight (nacked, returned, or lost with a connection).
   */
  private void pump() {
    if (pumping) {
      pumpAgain = true;
      return;
    }
    List<Channel> chs = channels;
    int room = maxInFlight - inFlight();
    if (chs == null || !connected() || room <= 0) return;
    pumping = true;
    pumpAgain = false;
    boolean replayMode = replayRequested;
    // behind or replaying: critical rows above the cursor go first, with the room they need
    Future<Integer> first = behind || replayMode ? ahead.next(cursor, Math.min(room, 1000), inFlightRows)
        .compose(rows -> rows.isEmpty() || channels != chs ? Future.succeededFuture(0) : publish(chs, rows).map(rows.size()))
        : Future.succeededFuture(0);
    first.compose(sent -> {
          int limit = Math.min(room - sent, 1000);
          if (limit <= 0) return Future.succeededFuture(true);
          // the replay walk is bounded by the cursor: rows above it are the forward path's, and walking a large
          // backlog there would starve the forward path
          return (replayMode ? outbox.pending(replayCursor, cursor, clock.millis() - replayMinAgeMs, limit)
              : outbox.pending(cursor, Long.MAX_VALUE, Long.MAX_VALUE, limit)).compose(rows -> forward(chs, rows, limit, replayMode));
        })
        .onComplete(ar -> {
          pumping = false;
          if (ar.failed()) {
            log.warn("outbox publish failed: {}", ar.cause().getMessage());
            return;
          }
          // after a replay pass always go on forward: a probe with no new rows (or a replay-only start) has
          // nothing else that would resume the forward path over a backlog larger than one read
          if (ar.result() || pumpAgain || replayRequested || replayMode) pump();
        });
  }

  /** One read of the forward or replay path: moves its cursor and publishes what is not in flight; true when the read was full. */
  private Future<Boolean> forward(List<Channel> chs, List<OutboxRow> rows, int limit, boolean replayMode) {
    boolean full = rows.size() == limit;
    List<OutboxRow> todo = new ArrayList<>(rows.size());
    for (OutboxRow r : rows) {
      if (!inFlightRows.contains(r.id())) todo.add(r);
    }
    if (replayMode) {
      if (full) replayCursor = rows.get(rows.size() - 1).id();
      else replayRequested = false;
      if (!todo.isEmpty()) metrics.replayed(todo.size());
    } else {
      behind = full;
      if (!rows.isEmpty()) cursor = Math.max(cursor, rows.get(rows.size() - 1).id());
    }
    // stopped (or reconnected) while the rows were read: they stay in the outbox for the next pump or start
    Future<Void> sent = todo.isEmpty() || channels != chs ? Future.succeededFuture() : publish(chs, todo);
    return sent.map(full);
  }

  /**
   * Publishes the rows of every slot and priority (routing key) with nothing unconfirmed at once; the rows
   * of a key with an unconfirmed message wait behind it ({@link SlotGate}) and go together once the broker
   * settled it. With batching off every key publishes at once.
   */
  private Future<Void> publish(List<Channel> chs, List<OutboxRow> rows) {
    if (batchMax <= 1) return send(chs, rows);
    // every row is sent now or held by the gate, and both count as in flight from here: the replayer, which reads
    // rows at or below the cursor, must not take a held one (at capacity rows wait there seconds behind an
    // unconfirmed message), and held rows take room. What the gate releases may include rows held before these, so
    // the held ones are not "rows minus now": counting that way missed them and replayed 300-800 rows a run.
    for (OutboxRow r : rows) inFlightRows.add(r.id());
    List<OutboxRow> now = gate.admit(rows, clock.millis());
    return now.isEmpty() ? Future.succeededFuture() : send(chs, now);
  }

  /**
   * Sends rows that may go now: one message per row when batching is off, otherwise a key's rows in id
   * order as v3 batches of at most {@code batchMax} rows and {@code batchBytes} bytes.
   */
  private Future<Void> send(List<Channel> chs, List<OutboxRow> rows) {
    List<List<OutboxRow>> messages = OutboxBatches.split(rows, batchMax, batchBytes);
    if (batchMax > 1) for (List<OutboxRow> m : messages) gate.published(m.get(0).routingKey(), 1);
    return publishThread.executeBlocking(() -> {
      for (List<OutboxRow> m : messages) {
        OutboxRow first = m.get(0);
        int i = ConfirmChannels.of(first.routingKey(), channelCount);
        Channel ch = chs.get(i);
        long tag = ch.getNextPublishSeqNo();
        long[] ids = new long[m.size()];
        for (int k = 0; k < ids.length; k++) ids[k] = m.get(k).id();
        String messageId = m.size() == 1 ? first.messageId() : "batch:" + first.messageId() + "+" + (m.size() - 1);
        inFlight.get(i).put(tag, new InFlight(ids, messageId, first.routingKey()));
        for (long id : ids) inFlightRows.add(id);
        AMQP.BasicProperties props = new AMQP.BasicProperties.Builder()
            .contentType("application/json").deliveryMode(2).messageId(messageId).timestamp(new Date(first.createdAtMs()))
            .build();
        byte[] body = m.size() == 1 ? first.body() : ResultBatch.join(m.stream().map(OutboxRow::body).toList());
        ch.basicPublish(topology.exchange(), first.routingKey(), true, props, body);
      }
      return null;
    }, true).onSuccess(v -> {
      publishedRows += rows.size();
      metrics.published(rows.size(), messages.size());
    }).mapEmpty();
  }

  /** Called on the client's thread for every ack/nack. */
  private void settle(int channel, long tag, boolean multiple, boolean ack) {
    ConcurrentNavigableMap<Long, InFlight> map = inFlight.get(channel);
    InFlight single = multiple ? null : map.get(tag);
    Map<Long, InFlight> done = multiple ? map.headMap(tag, true) : (single != null ? Map.of(tag, single) : Map.of());
    List<Long> confirmedRows = new ArrayList<>();
    List<String> settledKeys = new ArrayList<>();
    int nacked = 0;
    int returnedCount = 0;
    for (Map.Entry<Long, InFlight> e : new ArrayList<>(done.entrySet())) {
      InFlight f = e.getValue();
      map.remove(e.getKey());
      settledKeys.add(f.routingKey());
      if (ack && !returned.remove(f.messageId())) {
        for (long id : f.rowIds()) confirmedRows.add(id);
      } else {
        if (ack) returnedCount += f.rowIds().length; else nacked += f.rowIds().length;
        for (long id : f.rowIds()) inFlightRows.remove(id);
      }
    }
    int nackedFinal = nacked;
    int returnedFinal = returnedCount;
    context.runOnContext(v -> {
      if (nackedFinal > 0) metrics.publishNacked(nackedFinal);
      if (returnedFinal > 0) metrics.publishReturned(returnedFinal);
      if (!confirmedRows.isEmpty()) {
        metrics.publishConfirmed(confirmedRows.size());
        confirmedToMark.addAll(confirmedRows);
        markConfirmed();
      }
      List<OutboxRow> released = new ArrayList<>();
      long nowMs = clock.millis();
      for (String key : settledKeys) released.addAll(gate.settled(key, nowMs));
      List<Channel> chs = channels;
      if (!released.isEmpty() && chs != null) {
        send(chs, released).onFailure(e -> log.warn("outbox publish failed: {}", e.getMessage()));
      }
      pump();
    });
  }

  /** Every second, on the owner's context: how long slots gather now ({@link GatherPolicy}); ending it sends all gathered. */
  public void gather(boolean behindFleet) {
    long ms = gatherPolicy.gatherMs(behindFleet, publishedRows, clock.millis());
    if (!gate.gathers() || ms == gate.gatheringMs()) return; // batchMax 1 or gatherMs 0: never gathers
    gate.gatherFor(ms);
    if (gatherTimer >= 0) vertx.cancelTimer(gatherTimer);
    gatherTimer = ms > 0 ? vertx.setPeriodic(Math.max(10, ms / 4), t -> releaseDue()) : -1;
    if (ms > 0) log.info("{}: slots gather their results for up to {} ms before they are published", behindFleet ? "fleet behind" : "probe busy", ms);
    else log.info("fleet not behind, probe not busy: results are published as soon as their slot has nothing unconfirmed");
    releaseDue();
  }

  private void releaseDue() {
    List<OutboxRow> due = gate.due(clock.millis());
    List<Channel> chs = channels;
    if (!due.isEmpty() && chs != null) send(chs, due).onFailure(e -> log.warn("outbox publish failed: {}", e.getMessage()));
  }

  private void markConfirmed() {
    if (marking || confirmedToMark.isEmpty()) return;
    marking = true;
    List<Long> ids = new ArrayList<>(confirmedToMark);
    confirmedToMark.clear();
    outbox.markConfirmed(ids).onComplete(ar -> {
      marking = false;
      ids.forEach(inFlightRows::remove);
      if (ar.failed()) log.warn("cannot mark {} outbox rows confirmed ({}); they will be published again", ids.size(), ar.cause().getMessage());
      markConfirmed();
      // the marked rows no longer take room: a backlog goes on now, not at the next append or replay tick
      if (behind || replayRequested) pump();
    });
  }

  public Future<Void> stop() {
    List<Channel> chs = channels;
    channels = null;
    if (gatherTimer >= 0) vertx.cancelTimer(gatherTimer);
    gatherTimer = -1;
    Future<Void> f = chs == null ? Future.succeededFuture() : publishThread.executeBlocking(() -> {
      for (Channel ch : chs) {
        try {
          // give confirms of what is in flight a moment, so fewer rows are replayed next start
          ch.waitForConfirms(2000);
          ch.close();
        } catch (Exception ignored) {
          // unconfirmed rows stay in the outbox and are replayed next start
        }
      }
      return null;
    }, true);
    return f.eventually(() -> {
      publishThread.close();
      return Future.<Void>succeededFuture();
    }).mapEmpty();
  }
}
