package dev.inspection.it;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The judge (DESIGN.md §5): the probe's record of what it produced on one side, the database on the
 * other. Counts results lost (produced, never in history), duplicated (in history more than once),
 * unexpected (in history, never produced) and stale (current status is not the newest stored result).
 * A result the probe shed at its outbox watermarks (issue 12) and never delivered is shed, not lost.
 */
public final class Ledger {
  /** @param shed the probe gave it up at a watermark (the outbox's {@code shed_row}) */
  public record Produced(String messageId, String deviceId, long cycleId, long seq, boolean shed) {
    public Produced(String messageId, String deviceId, long cycleId, long seq) {
      this(messageId, deviceId, cycleId, seq, false);
    }
  }

  public record Stored(String messageId, String deviceId, long cycleId, long seq) {}

  public record Report(int produced, int stored, List<String> lost, List<String> duplicated, List<String> unexpected, List<String> stale,
      List<String> shed) {
    public boolean clean() {
      return lost.isEmpty() && duplicated.isEmpty() && unexpected.isEmpty() && stale.isEmpty();
    }

    @Override
    public String toString() {
      return "produced=" + produced + " stored=" + stored + " shed=" + shed.size() + " lost=" + lost.size() + " duplicated=" + duplicated.size()
          + " unexpected=" + unexpected.size() + " stale=" + stale.size()
          + (clean() ? "" : " first lost=" + first(lost) + " dup=" + first(duplicated) + " unexpected=" + first(unexpected) + " stale=" + first(stale));
    }

    private static String first(List<String> l) {
      return l.isEmpty() ? "-" : l.get(0);
    }
  }

  private Ledger() {}

  public static Report check(List<Produced> produced, List<Stored> history, List<Stored> current) {
    Set<String> producedIds = new HashSet<>();
    for (Produced p : produced) producedIds.add(p.messageId());
    Map<String, Integer> seen = new HashMap<>();
    Map<String, Stored> newest = new HashMap<>();
    Comparator<Stored> order = Comparator.comparingLong(Stored::cycleId).thenComparingLong(Stored::seq);
    for (Stored s : history) {
      seen.merge(s.messageId(), 1, Integer::sum);
      newest.merge(s.deviceId(), s, (a, b) -> order.compare(a, b) >= 0 ? a : b);
    }
    List<String> lost = new ArrayList<>();
    List<String> shed = new ArrayList<>();
    for (Produced p : produced) {
      if (!seen.containsKey(p.messageId())) (p.shed() ? shed : lost).add(p.messageId());
    }
    List<String> dup = new ArrayList<>();
    seen.forEach((id, n) -> { if (n > 1) dup.add(id); });
    List<String> unexpected = new ArrayList<>();
    for (String id : seen.keySet()) if (!producedIds.contains(id)) unexpected.add(id);
    List<String> stale = new ArrayList<>();
    Set<String> withCurrent = new HashSet<>();
    for (Stored c : current) {
      withCurrent.add(c.deviceId());
      Stored n = newest.get(c.deviceId());
      if (n == null || order.compare(c, n) != 0) stale.add(c.deviceId() + " current=" + c.messageId() + " newest=" + (n == null ? null : n.messageId()));
    }
    for (String device : newest.keySet()) if (!withCurrent.contains(device)) stale.add(device + " has history but no current status");
    return new Report(produced.size(), history.size(), lost, dup, unexpected, stale, shed);
  }
}
