package dev.inspection.state;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Writes a {@link DerivedState} as the text of {@link DerivedState#toJson()} encoded, character for character,
 * but straight into one buffer: the worker writes a snapshot for every device of every batch (INV-9), and
 * building the JSON tree and walking it again cost about a tenth of the node's CPU at capacity (JFR, issue 11).
 * What it writes is read back by {@link DerivedState#fromJson}; the test holds the two forms equal.
 */
public final class DerivedJson {
  private DerivedJson() {}

  public static String encode(DerivedState s) {
    StringBuilder b = new StringBuilder(320);
    b.append("{\"v\":").append(DerivedState.SNAPSHOT_VERSION);
    b.append(",\"consec_failure_count\":").append(s.consecFailures());
    b.append(",\"last_n_states_ring\":[");
    List<CheckStatus> ring = s.ring();
    for (int i = 0; i < ring.size(); i++) {
      if (i > 0) b.append(',');
      b.append('"').append(ring.get(i).name()).append('"');
    }
    b.append("],\"offline_state\":\"").append(s.offlinePhase().name());
    b.append("\",\"state_type\":\"").append(s.offlinePhase().stateType());
    b.append("\",\"flapping\":").append(s.flapping());
    b.append(",\"firing\":{");
    boolean first = true;
    for (Map.Entry<String, Integer> e : s.firing().entrySet()) {
      if (!first) b.append(',');
      first = false;
      string(b, e.getKey()).append(':').append(e.getValue().intValue());
    }
    b.append('}');
    if (s.lastHeartbeatAt() != null) quoted(b.append(",\"last_heartbeat_at\":"), s.lastHeartbeatAt());
    if (s.rateWindow() != null) {
      DerivedState.RateWindow w = s.rateWindow();
      quoted(b.append(",\"rate_window\":{\"window_start\":"), w.windowStart());
      b.append(",\"events_count\":").append(w.eventsCount());
      quoted(b.append(",\"last_event_at\":"), w.lastEventAt()).append('}');
    }
    if (s.debouncePending() != null) {
      quoted(b.append(",\"debounce_pending\":{\"since\":"), s.debouncePending().since());
      b.append(",\"trigger_threshold\":").append(s.debouncePending().triggerThreshold()).append('}');
    }
    if (s.downSince() != null) quoted(b.append(",\"down_since\":"), s.downSince());
    if (s.position() != null) {
      b.append(",\"position\":{\"cycle_id\":").append(s.position().cycleId()).append(",\"seq\":").append(s.position().seq()).append('}');
    }
    HistoryMark h = s.history();
    if (h != null) {
      b.append(",\"history\":[").append(h.position().cycleId()).append(',').append(h.position().seq()).append(',').append(h.digest())
          .append(',').append(h.keptAt().toEpochMilli()).append(']');
    }
    return b.append('}').toString();
  }

  private static StringBuilder string(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c == '"' || c == '\\') {
        // alert keys are plain names; anything that needs escaping is escaped exactly as the JSON tree's encoder does
        return b.append(JsonStringEncoder.getInstance().quoteAsString(s)).append('"');
      }
    }
    return b.append(s).append('"');
  }

  private static StringBuilder quoted(StringBuilder b, Instant t) {
    return IsoInstant.append(b.append('"'), t).append('"');
  }
}
