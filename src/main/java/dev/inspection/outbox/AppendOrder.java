package dev.inspection.outbox;

import dev.inspection.messaging.Priority;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * Which buffered check results the probe's next group commit takes (issue 12: critical devices first).
 * Everything, up to {@code max}, in check order; when more wait than one commit takes, the critical
 * results first, so a critical result never queues on the probe behind a normal backlog. The order within
 * each priority is kept, and a device has one priority, so a device's results stay in check (seq) order.
 */
public final class AppendOrder {
  private AppendOrder() {}

  /** Removes the next commit's results from {@code buffer} and returns them. */
  public static List<CheckResult> take(List<CheckResult> buffer, int max) {
    List<CheckResult> batch = new ArrayList<>(Math.min(max, buffer.size()));
    if (buffer.size() > max) {
      for (CheckResult r : buffer) {
        if (batch.size() == max) break;
        if (r.priority() == Priority.HIGH) batch.add(r);
      }
      if (!batch.isEmpty()) {
        Set<CheckResult> taken = Collections.newSetFromMap(new IdentityHashMap<>());
        taken.addAll(batch);
        buffer.removeIf(taken::contains);
      }
    }
    int more = Math.min(max - batch.size(), buffer.size());
    batch.addAll(buffer.subList(0, more));
    buffer.subList(0, more).clear();
    return batch;
  }
}
