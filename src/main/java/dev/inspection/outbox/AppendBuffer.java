package dev.inspection.outbox;

import dev.inspection.messaging.Priority;
import io.vertx.core.Promise;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Check results waiting for the probe's next group commit, critical ones first (issue 12): when more wait
 * than one commit takes, a critical result never queues behind a normal backlog on the probe. Two queues,
 * so taking a commit's share costs what it takes, not what waits. The order within each priority is kept,
 * and a device has one priority, so a device's results stay in check (seq) order. Not thread-safe: the
 * probe's context owns it.
 *
 * <p>A pushed result (issue 13: a frame a device sent to the probe's ingest endpoint) comes with a promise that
 * the commit completes with its durable row ({@link #durable}) or fails ({@link #failed}, {@link #clear}): the
 * sender is answered 2xx only once its frame is in the outbox, in the same group commit as polled results.
 */
public final class AppendBuffer {
  private final ArrayDeque<CheckResult> critical = new ArrayDeque<>();
  private final ArrayDeque<CheckResult> rest = new ArrayDeque<>();
  private final Map<CheckResult, Promise<OutboxRow>> waiting = new IdentityHashMap<>();

  public void add(CheckResult r) {
    (r.priority() == Priority.HIGH ? critical : rest).addLast(r);
  }

  /** A pushed result: {@code durable} completes with its row once a commit made it durable, or fails. */
  public void add(CheckResult r, Promise<OutboxRow> durable) {
    waiting.put(r, durable);
    add(r);
  }

  public int size() {
    return critical.size() + rest.size();
  }

  public boolean isEmpty() {
    return critical.isEmpty() && rest.isEmpty();
  }

  /** Drops what waits; pushed results' senders are told their frames were not stored. */
  public void clear() {
    critical.clear();
    rest.clear();
    List<Promise<OutboxRow>> left = new ArrayList<>(waiting.values());
    waiting.clear();
    for (Promise<OutboxRow> p : left) p.tryFail("the probe is stopping: the frame was not stored; send it again");
  }

  /** Removes and returns the next commit's results: up to {@code max}, the critical ones first, each priority in check order. */
  public List<CheckResult> take(int max) {
    List<CheckResult> batch = new ArrayList<>(Math.min(max, size()));
    while (batch.size() < max && !critical.isEmpty()) batch.add(critical.pollFirst());
    while (batch.size() < max && !rest.isEmpty()) batch.add(rest.pollFirst());
    return batch;
  }

  /** The commit of {@code batch} succeeded; {@code rows} are its rows in the batch's order (as {@link Outbox#append} returns them). */
  public void durable(List<CheckResult> batch, List<OutboxRow> rows) {
    if (waiting.isEmpty()) return;
    for (int i = 0; i < batch.size(); i++) {
      Promise<OutboxRow> p = waiting.remove(batch.get(i));
      if (p != null) p.tryComplete(rows.get(i));
    }
  }

  /** The commit of {@code batch} failed: nothing of it is durable. */
  public void failed(List<CheckResult> batch, Throwable cause) {
    if (waiting.isEmpty()) return;
    for (CheckResult r : batch) {
      Promise<OutboxRow> p = waiting.remove(r);
      if (p != null) p.tryFail(cause);
    }
  }
}
