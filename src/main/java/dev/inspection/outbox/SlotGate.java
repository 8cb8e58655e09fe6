package dev.inspection.outbox;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Adaptive batching per routing key (one slot and priority; issue 11). Pure, single-threaded. A key with
 * nothing unconfirmed publishes at once; while a message of it is unconfirmed, its new rows are held and go
 * together when the broker has settled it. So a lone result never waits for a timer, and under load (slow
 * confirms) a slot's messages grow by themselves: the batch is what arrived during one round trip.
 * Rows keep their order per key: held rows are always newer than the key's unconfirmed ones.
 */
final class SlotGate {
  private final Map<String, Integer> unconfirmed = new HashMap<>();
  private final Map<String, List<OutboxRow>> held = new LinkedHashMap<>();
  private int heldRows;

  /** The rows that may be published now, in their order; the others are held until their key is settled. */
  List<OutboxRow> admit(List<OutboxRow> rows) {
    List<OutboxRow> now = new ArrayList<>(rows.size());
    for (OutboxRow r : rows) {
      String key = r.routingKey();
      if (unconfirmed.getOrDefault(key, 0) > 0 || held.containsKey(key)) {
        held.computeIfAbsent(key, k -> new ArrayList<>()).add(r);
        heldRows++;
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
   * unconfirmed, else none.
   */
  List<OutboxRow> settled(String key) {
    Integer left = unconfirmed.computeIfPresent(key, (k, n) -> n > 1 ? n - 1 : null);
    if (left != null) return List.of();
    List<OutboxRow> out = held.remove(key);
    if (out == null) return List.of();
    heldRows -= out.size();
    return out;
  }

  /** Rows held back now. */
  int held() {
    return heldRows;
  }

  /** The connection is gone: nothing is unconfirmed any more, and the held rows are read from the outbox again. */
  List<OutboxRow> clear() {
    List<OutboxRow> dropped = new ArrayList<>(heldRows);
    held.values().forEach(dropped::addAll);
    held.clear();
    unconfirmed.clear();
    heldRows = 0;
    return dropped;
  }
}
