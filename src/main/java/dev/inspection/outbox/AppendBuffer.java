package dev.inspection.outbox;

import dev.inspection.messaging.Priority;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Check results waiting for the probe's next group commit, critical ones first (issue 12): when more wait
 * than one commit takes, a critical result never queues behind a normal backlog on the probe. Two queues,
 * so taking a commit's share costs what it takes, not what waits. The order within each priority is kept,
 * and a device has one priority, so a device's results stay in check (seq) order. Not thread-safe: the
 * probe's context owns it.
 */
public final class AppendBuffer {
  private final ArrayDeque<CheckResult> critical = new ArrayDeque<>();
  private final ArrayDeque<CheckResult> rest = new ArrayDeque<>();

  public void add(CheckResult r) {
    (r.priority() == Priority.HIGH ? critical : rest).addLast(r);
  }

  public int size() {
    return critical.size() + rest.size();
  }

  public boolean isEmpty() {
    return critical.isEmpty() && rest.isEmpty();
  }

  public void clear() {
    critical.clear();
    rest.clear();
  }

  /** Removes and returns the next commit's results: up to {@code max}, the critical ones first, each priority in check order. */
  public List<CheckResult> take(int max) {
    List<CheckResult> batch = new ArrayList<>(Math.min(max, size()));
    while (batch.size() < max && !critical.isEmpty()) batch.add(critical.pollFirst());
    while (batch.size() < max && !rest.isEmpty()) batch.add(rest.pollFirst());
    return batch;
  }
}
