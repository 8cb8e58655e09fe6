package dev.inspection.outbox;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which outbox rows travel together in one message (issue 11). Pure. Rows of one routing key (one slot and
 * priority) that are waiting together are cut, in id order, into runs of at most {@code max} rows and
 * {@code maxBytes} bytes of bodies; a row larger than that goes alone. The order of the messages keeps each
 * routing key's rows in id order, which is each device's seq order.
 */
final class OutboxBatches {
  private OutboxBatches() {}

  static List<List<OutboxRow>> split(List<OutboxRow> rows, int max, int maxBytes) {
    List<List<OutboxRow>> out = new ArrayList<>();
    if (max <= 1) {
      for (OutboxRow r : rows) out.add(List.of(r));
      return out;
    }
    Map<String, List<OutboxRow>> open = new LinkedHashMap<>();
    Map<String, Integer> openBytes = new LinkedHashMap<>();
    for (OutboxRow r : rows) {
      List<OutboxRow> run = open.get(r.routingKey());
      int bytes = openBytes.getOrDefault(r.routingKey(), 0);
      if (run != null && (run.size() >= max || bytes + r.body().length + 1 > maxBytes)) {
        out.add(run);
        run = null;
      }
      if (run == null) {
        run = new ArrayList<>();
        open.put(r.routingKey(), run);
        bytes = 0;
      }
      run.add(r);
      openBytes.put(r.routingKey(), bytes + r.body().length + 1);
    }
    out.addAll(open.values());
    return out;
  }
}
