package dev.inspection.outbox;

import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Critical rows first (issue 12 item 2, seed 000 §7.1): while the publisher is behind — a backlog above
 * its forward cursor, or a replay walk over refused rows — unconfirmed rows of critical devices
 * (priority 1) above the cursor are read ahead of the others, so a critical result never queues on the
 * probe behind thousands of normal ones. A device keeps one priority and so one queue: its rows still go
 * out in id (seq) order. The rows read ahead stay unconfirmed in the outbox like any other; the forward
 * read that reaches them later skips those in flight, and the replayer takes any the broker refused.
 *
 * <p>Uses the partial index {@code idx_outbox_unconfirmed_critical_ids} ({@link OutboxSchema}). Runs
 * on the publisher's context.
 */
final class CriticalAhead {
  private static final String READ = """
      SELECT o.id, o.message_id, o.routing_key, o.body, o.created_at FROM outbox_unconfirmed u CROSS JOIN outbox o
      WHERE o.id = u.id AND u.priority = 1 AND u.id > ? ORDER BY u.id LIMIT ?""";

  private final Outbox outbox;
  /** The highest critical row read ahead since the last reset; the next read starts above it or the cursor. */
  private long aheadCursor;

  CriticalAhead(Outbox outbox) {
    this.outbox = outbox;
  }

  /** After a (re)connect nothing is in flight: critical rows are read again from the forward cursor. */
  void reset() {
    aheadCursor = 0;
  }

  /** Up to {@code limit} unconfirmed critical rows above {@code cursor} not yet read ahead and not in flight, in id order. */
  Future<List<OutboxRow>> next(long cursor, int limit, Set<Long> inFlight) {
    if (limit <= 0) return Future.succeededFuture(List.of());
    long from = Math.max(cursor, aheadCursor);
    return outbox.run(() -> OutboxRow.read(outbox.connection(), READ, from, limit)).map(rows -> {
      if (!rows.isEmpty()) aheadCursor = Math.max(aheadCursor, rows.get(rows.size() - 1).id());
      List<OutboxRow> todo = new ArrayList<>(rows.size());
      for (OutboxRow r : rows) if (!inFlight.contains(r.id())) todo.add(r);
      return todo;
    });
  }
}
