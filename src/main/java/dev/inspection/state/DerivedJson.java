package dev.inspection.state;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import java.time.Instant;
import java.time.LocalDate;
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
    if (s.lastHeartbeatAt() != null) instant(b.append(",\"last_heartbeat_at\":"), s.lastHeartbeatAt());
    if (s.rateWindow() != null) {
      DerivedState.RateWindow w = s.rateWindow();
      instant(b.append(",\"rate_window\":{\"window_start\":"), w.windowStart());
      b.append(",\"events_count\":").append(w.eventsCount());
      instant(b.append(",\"last_event_at\":"), w.lastEventAt()).append('}');
    }
    if (s.debouncePending() != null) {
      instant(b.append(",\"debounce_pending\":{\"since\":"), s.debouncePending().since());
      b.append(",\"trigger_threshold\":").append(s.debouncePending().triggerThreshold()).append('}');
    }
    if (s.downSince() != null) instant(b.append(",\"down_since\":"), s.downSince());
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

  /** A quoted {@link Instant#toString()}, written without a formatter for the years 0..9999 a device reports. */
  static StringBuilder instant(StringBuilder b, Instant t) {
    long sec = t.getEpochSecond();
    long day = Math.floorDiv(sec, 86_400L);
    int secOfDay = (int) Math.floorMod(sec, 86_400L);
    if (day < -719_528L || day > 2_932_896L) return b.append('"').append(t).append('"'); // outside 0000-01-01 .. 9999-12-31
    LocalDate d = LocalDate.ofEpochDay(day);
    b.append('"');
    pad(b, d.getYear(), 4).append('-');
    pad(b, d.getMonthValue(), 2).append('-');
    pad(b, d.getDayOfMonth(), 2).append('T');
    pad(b, secOfDay / 3600, 2).append(':');
    pad(b, secOfDay / 60 % 60, 2).append(':');
    pad(b, secOfDay % 60, 2);
    int nano = t.getNano();
    if (nano != 0) {
      b.append('.');
      if (nano % 1_000_000 == 0) pad(b, nano / 1_000_000, 3);
      else if (nano % 1_000 == 0) pad(b, nano / 1_000, 6);
      else pad(b, nano, 9);
    }
    return b.append("Z\"");
  }

  private static StringBuilder pad(StringBuilder b, int v, int width) {
    for (int limit = 1, i = 1; i < width; i++) {
      limit *= 10;
      if (v < limit) b.append('0');
    }
    return b.append(v);
  }
}
