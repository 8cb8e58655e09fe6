package dev.inspection.outbox;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Adaptive batching per routing key (one slot and priority; issue 11). Pure, single-threaded. A key with
 * nothing unconfirmed publishes at once; while a message of it is unconfirmed, its new rows are held and go
 * together when the broker has settled it. So a lone result never waits for a timer, and under load (slow
 * confirms) a slot's messages grow by themselves: the batch is what arrived during one round trip.
 *
 * <p>While the fleet is behind ({@link #gathering(boolean)}: the probe is in a backpressure mode, so results
 * already wait seconds in the slot queues) a key also gathers when nothing of it is unconfirmed, until it
 * holds {@code gatherRows} rows or its oldest held row has waited {@code gatherMs}: fewer, larger messages,
 * which is what a message costs the broker (README, "What a message costs RabbitMQ"), for a wait far below
 * the one in the queues. While the probe is busy ({@link GatherPolicy}) keys gather the same way for a shorter time
 * ({@link #gatherFor}). {@link #due(long)} hands out the keys whose wait is over.
 *
 * <p>Rows keep their order per key: held rows are always newer than the key's unconfirmed ones.
 */
final class SlotGate {
  private final int gatherRows;
  private final long gatherMs;
  private final Map<String, Integer> unconfirmed = new HashMap<>();
  private final Map<String, Held> held = new LinkedHashMap<>();
  private int heldRows;
  /** How long keys gather now beyond the round trip; 0 = not at all. */
  private long gatheringMs;

  private static final class Held {
    final List<OutboxRow> rows = new ArrayList<>();
    final long since;

    Held(long since) {
      this.since = since;
    }
  }

  /** No gathering beyond the round trip: every key publishes as soon as nothing of it is unconfirmed. */
  SlotGate() {
    this(1, 0);
  }

  /**
   * @param gatherRows while gathering, a key goes once it holds this many rows
   * @param gatherMs while the fleet is behind ({@link #gathering(boolean)}), a key goes once its oldest held row waited this long
   */
  SlotGate(int gatherRows, long gatherMs) {
    this.gatherRows = Math.max(1, gatherRows);
    this.gatherMs = Math.max(0, gatherMs);
  }

  /** Whether keys gather beyond the round trip (the fleet is behind), for up to {@code gatherMs}; off releases every waiting key at the next {@link #due}. */
  void gathering(boolean on) {
    gatherFor(on ? gatherMs : 0);
  }

  /** Keys gather beyond the round trip for up to {@code ms} (0 = not at all; no effect when the gate cannot gather). */
  void gatherFor(long ms) {
    gatheringMs = gathers() ? Math.max(0, ms) : 0;
  }

  /** Whether this gate can gather at all (more than one row and a time above 0). */
  boolean gathers() {
    return gatherRows > 1 && gatherMs > 0;
  }

  boolean gathering() {
    return gatheringMs > 0;
  }

  /** The gather time now (0: keys publish as soon as nothing of them is unconfirmed). */
  long gatheringMs() {
    return gatheringMs;
  }

  /** The rows that may be published now, in their order per key; the others are held. */
  List<OutboxRow> admit(List<OutboxRow> rows, long nowMs) {
    List<OutboxRow> now = new ArrayList<>(rows.size());
    for (OutboxRow r : rows) {
      String key = r.routingKey();
      Held h = held.get(key);
      if (h != null || unconfirmed.getOrDefault(key, 0) > 0 || gatheringMs > 0) {
        if (h == null) held.put(key, h = new Held(nowMs));
        h.rows.add(r);
        heldRows++;
        if (unconfirmed.getOrDefault(key, 0) == 0 && h.rows.size() >= gatherRows) now.addAll(release(key));
      } else {
        now.add(r);
      }
    }
    return now;
  }

  /** {@code messages} messages of {@code key} were published. */
  void published(String key, int messages) {
    unconfirmed.merge(key, messages, Integer::sum);
  }

  /**
   * The broker settled one message of {@code key} (ack, nack or return: the outbox keeps an unconfirmed row
   * either way). Returns the rows to publish now: everything held for the key once nothing of it is
   * unconfirmed and its gathering is over, else none.
   */
  List<OutboxRow> settled(String key, long nowMs) {
    Integer left = unconfirmed.computeIfPresent(key, (k, n) -> n > 1 ? n - 1 : null);
    if (left != null) return List.of();
    Held h = held.get(key);
    return h == null || !ready(h, nowMs) ? List.of() : release(key);
  }

  /** The held rows of every key whose wait is over (nothing unconfirmed, and gathered enough or long enough), key by key. */
  List<OutboxRow> due(long nowMs) {
    if (heldRows == 0) return List.of();
    List<OutboxRow> out = new ArrayList<>();
    for (Iterator<Map.Entry<String, Held>> it = held.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, Held> e = it.next();
      if (unconfirmed.containsKey(e.getKey()) || !ready(e.getValue(), nowMs)) continue;
      it.remove();
      heldRows -= e.getValue().rows.size();
      out.addAll(e.getValue().rows);
    }
    return out;
  }

  private boolean ready(Held h, long nowMs) {
    return gatheringMs == 0 || h.rows.size() >= gatherRows || nowMs - h.since >= gatheringMs;
  }

  private List<OutboxRow> release(String key) {
    Held h = held.remove(key);
    heldRows -= h.rows.size();
    return h.rows;
  }

  /** Rows held back now. */
  int held() {
    return heldRows;
  }

  /** The connection is gone: nothing is unconfirmed any more, and the held rows are read from the outbox again. */
  List<OutboxRow> clear() {
    List<OutboxRow> dropped = new ArrayList<>(heldRows);
    held.values().forEach(h -> dropped.addAll(h.rows));
    held.clear();
    unconfirmed.clear();
    heldRows = 0;
    return dropped;
  }
}
