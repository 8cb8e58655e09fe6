package dev.inspection.state;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import java.io.IOException;
import java.time.DateTimeException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A {@link DerivedState}'s snapshot text, written and read without a JSON tree, in either layout ({@link SnapshotLayout}).
 *
 * <p>{@link #encode} writes the first layout ({@code "v":1}, {@link SnapshotLayout#V1}): the text of {@link
 * DerivedState#toJson()} encoded, character for character, but straight into one buffer: the worker writes a snapshot
 * for every device of every batch (INV-9), and building the JSON tree and walking it again cost about a tenth of the
 * node's CPU at capacity (JFR, issue 11); the test holds the two forms equal.
 *
 * <p>{@link #decode} reads it back: a new owner reads a snapshot for every device of every slot it takes (INV-10), and
 * the JSON tree the database client built for each and the walk through it were half of a takeover's load (JFR, issue
 * 11). It is the only reader ({@link DerivedState#fromJson} hands it the tree's text), and it reads both layouts. Text
 * exactly as an encoder writes it is read character by character ({@link CompactSnapshot}, {@link CanonicalSnapshot});
 * any other goes token by token through Jackson's parser: the members in any order and with any spacing (a snapshot
 * stored as {@code jsonb} before V013 comes back reordered and spaced), an unknown member skipped, a JSON {@code null}
 * read as the member's absence, the last of a repeated member kept, an instant as ISO text or epoch milliseconds.
 */
public final class DerivedJson {
  private static final JsonFactory FACTORY = new JsonFactory();
  /** A member that is an object or an array where a scalar was expected. */
  private static final Object NOT_SCALAR = new Object();

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

  static StringBuilder string(StringBuilder b, String s) {
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

  /**
   * The state {@code text} holds; {@code null} for a text that is JSON {@code null}. A snapshot that is not a JSON
   * object, is malformed, or breaks the state's invariants is refused with an {@link IllegalArgumentException} that
   * says which member is wrong.
   */
  public static DerivedState decode(String text) {
    DerivedState fast = CompactSnapshot.read(text);
    if (fast == null) fast = CanonicalSnapshot.read(text);
    return fast != null ? fast : readAnyLayout(text);
  }

  /** {@link #decode} without the canonical layout's reader: any order and spacing, a refusal naming the member. */
  static DerivedState readAnyLayout(String text) {
    try (JsonParser p = FACTORY.createParser(text)) {
      JsonToken top = p.nextToken();
      if (top == JsonToken.VALUE_NULL) return null;
      if (top != JsonToken.START_OBJECT) throw new IllegalArgumentException("derived_snapshot is not a JSON object but " + top);
      return new Reader(p).state();
    } catch (JsonProcessingException e) { // one line for the log, not Jackson's two
      throw new IllegalArgumentException("malformed derived_snapshot: " + e.getOriginalMessage() + " at character " + e.getLocation().getCharOffset(), e);
    } catch (IOException | DateTimeException e) {
      throw new IllegalArgumentException("malformed derived_snapshot: " + e.getMessage(), e);
    }
  }

  /** One snapshot's members as they come; {@link #state} checks what is required and builds the state. */
  private static final class Reader {
    private final JsonParser p;
    private Number v;
    private Number consecFailures;
    private List<CheckStatus> ring;
    private TreeMap<String, Integer> firing;
    private Boolean flapping;
    private String offline;
    private Instant heartbeat;
    private Instant downSince;
    private DerivedState.RateWindow rateWindow;
    private DerivedState.Debounce debounce;
    private DerivedState.Position position;
    private HistoryMark history;
    // the compact layout's members (v2, CompactSnapshot): its ring, its history mark's items
    private String letters;
    private long[] mark;
    private Instant markKept;
    private final SnapshotInstants instants = new SnapshotInstants();

    Reader(JsonParser p) {
      this.p = p;
    }

    DerivedState state() throws IOException {
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        JsonToken t = p.nextToken();
        switch (name) {
          case "v" -> v = number(t);
          case "consec_failure_count" -> consecFailures = number(t);
          case "last_n_states_ring" -> ring = t == JsonToken.VALUE_NULL ? null : ring(t);
          case "firing" -> firing = t == JsonToken.VALUE_NULL ? null : firing(t);
          case "flapping" -> flapping = t == JsonToken.VALUE_NULL ? null : bool(name, t);
          case "offline_state" -> offline = t == JsonToken.VALUE_NULL ? null : text(name, t);
          case "last_heartbeat_at" -> heartbeat = instant(name, t);
          case "down_since" -> downSince = instant(name, t);
          case "rate_window" -> rateWindow = t == JsonToken.VALUE_NULL ? null : rateWindow(t);
          case "debounce_pending" -> debounce = t == JsonToken.VALUE_NULL ? null : debounce(t);
          case "position" -> position = t == JsonToken.VALUE_NULL ? null : position(t);
          case "history" -> history = t == JsonToken.VALUE_NULL ? null : history(t);
          case "n" -> consecFailures = number(t);
          case "r" -> letters = t == JsonToken.VALUE_NULL ? null : text(name, t);
          case "a" -> firing = t == JsonToken.VALUE_NULL ? null : firing(t);
          case "hb" -> heartbeat = instant(name, t);
          case "ds" -> downSince = instant(name, t);
          case "rw" -> rateWindow = t == JsonToken.VALUE_NULL ? null : compactRateWindow(t);
          case "dp" -> debounce = t == JsonToken.VALUE_NULL ? null : compactDebounce(t);
          case "p" -> position = t == JsonToken.VALUE_NULL ? null : compactPosition(t);
          case "h" -> compactHistory(t);
          default -> p.skipChildren(); // state_type is derived; anything else is not this layout's
        }
      }
      if (v != null && v.intValue() == CompactSnapshot.VERSION && v.doubleValue() == CompactSnapshot.VERSION) return compact();
      if (v == null || v.intValue() != DerivedState.SNAPSHOT_VERSION || v.doubleValue() != DerivedState.SNAPSHOT_VERSION) {
        throw new IllegalArgumentException("unknown snapshot version " + v + " (this build reads " + DerivedState.SNAPSHOT_VERSION + " and "
            + CompactSnapshot.VERSION + ")");
      }
      if (ring == null) throw new IllegalArgumentException("missing last_n_states_ring");
      if (firing == null) throw new IllegalArgumentException("missing firing");
      if (flapping == null) throw new IllegalArgumentException("missing flapping");
      if (consecFailures == null) throw new IllegalArgumentException("missing or non-numeric consec_failure_count");
      HistoryMark mark = history;
      if (mark != null && mark.position().equals(position)) mark = new HistoryMark(position, mark.digest(), mark.keptAt()); // one object
      return new DerivedState(consecFailures.intValue(), ring, heartbeat, rateWindow, OfflinePhase.parse(offline), debounce, downSince,
          flapping, position, firing, mark);
    }

    /** The state of a compact snapshot ({@link CompactSnapshot}'s layout): what it leaves out follows from the rest. */
    private DerivedState compact() {
      if (consecFailures == null) throw new IllegalArgumentException("missing or non-numeric n (consecutive failures)");
      if (letters == null) throw new IllegalArgumentException("missing r (the ring)");
      List<CheckStatus> r = new ArrayList<>(letters.length());
      for (int k = 0; k < letters.length(); k++) {
        char c = letters.charAt(k);
        if (c != 'U' && c != 'D') throw new IllegalArgumentException("ring entry '" + c + "' in r is not U or D");
        r.add(c == 'U' ? CheckStatus.UP : CheckStatus.DOWN);
      }
      TreeMap<String, Integer> f = firing == null ? new TreeMap<>() : firing; // none firing: no "a"
      HistoryMark h = null;
      if (mark != null) {
        if (mark.length == 1 && position == null) throw new IllegalArgumentException("history mark [digest, kept_at] needs a position (p)");
        h = mark.length == 1 ? new HistoryMark(position, mark[0], markKept)
            : new HistoryMark(new DerivedState.Position(mark[0], mark[1]), mark[2], markKept);
      }
      int n = consecFailures.intValue();
      return new DerivedState(n, r, heartbeat, rateWindow, CompactSnapshot.phase(n, debounce), debounce, downSince,
          f.containsKey(DeviceFold.FLAPPING), position, f, h);
    }

    /** The items of the compact layout's array {@code name}, which must hold {@code sizes} of them (one of); each a number or a string. */
    private Object[] items(String name, JsonToken t, String form, int... sizes) throws IOException {
      expect(name, t, JsonToken.START_ARRAY);
      List<Object> items = new ArrayList<>(4);
      for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY; e = p.nextToken()) {
        if (e == JsonToken.VALUE_NUMBER_INT) items.add(p.getLongValue());
        else if (e == JsonToken.VALUE_STRING) items.add(p.getText());
        else throw new IllegalArgumentException(name + " item " + items.size() + " is not a whole number or a string but " + e + " (" + name + " is " + form + ")");
      }
      for (int size : sizes) {
        if (items.size() == size) return items.toArray();
      }
      throw new IllegalArgumentException(name + " must be " + form + ", got " + items.size() + " items");
    }

    private Instant itemInstant(Object[] items, int k) {
      return items[k] instanceof Long ms ? instants.same(Instant.ofEpochMilli(ms)) : instant((String) items[k]);
    }

    private static long itemNumber(Object[] items, int k, String name) {
      if (!(items[k] instanceof Long n)) throw new IllegalArgumentException(name + " item " + k + " is not a whole number");
      return n;
    }

    private DerivedState.RateWindow compactRateWindow(JsonToken t) throws IOException {
      Object[] m = items("rw", t, "[window_start, events_count, last_event_at]", 3);
      return new DerivedState.RateWindow(itemInstant(m, 0), itemNumber(m, 1, "rw"), itemInstant(m, 2));
    }

    private DerivedState.Debounce compactDebounce(JsonToken t) throws IOException {
      Object[] m = items("dp", t, "[since, trigger_threshold]", 2);
      long threshold = itemNumber(m, 1, "dp");
      if (threshold > Integer.MAX_VALUE) throw new IllegalArgumentException("dp's trigger threshold " + threshold + " is beyond an int");
      return new DerivedState.Debounce(itemInstant(m, 0), (int) threshold);
    }

    private DerivedState.Position compactPosition(JsonToken t) throws IOException {
      Object[] m = items("p", t, "[cycle_id, seq]", 2);
      return new DerivedState.Position(itemNumber(m, 0, "p"), itemNumber(m, 1, "p"));
    }

    /** {@code [digest, kept_at]} (at the position {@code p}) or {@code [cycle_id, seq, digest, kept_at]}. */
    private void compactHistory(JsonToken t) throws IOException {
      if (t == JsonToken.VALUE_NULL) {
        mark = null;
        return;
      }
      Object[] m = items("h", t, "[digest, kept_at] or [cycle_id, seq, digest, kept_at]", 2, 4);
      mark = new long[m.length - 1];
      for (int k = 0; k < mark.length; k++) mark[k] = itemNumber(m, k, "h");
      markKept = itemInstant(m, m.length - 1);
    }

    /** The number at {@code t}; null for JSON null, and for anything else that is not a number (a required one is then missing). */
    private Number number(JsonToken t) throws IOException {
      if (t == JsonToken.VALUE_NUMBER_INT || t == JsonToken.VALUE_NUMBER_FLOAT) return p.getNumberValue();
      p.skipChildren();
      return null;
    }

    private String text(String name, JsonToken t) throws IOException {
      if (t != JsonToken.VALUE_STRING) throw new IllegalArgumentException(name + " is not a string but " + t);
      return p.getText();
    }

    private boolean bool(String name, JsonToken t) {
      if (t == JsonToken.VALUE_TRUE) return true;
      if (t == JsonToken.VALUE_FALSE) return false;
      throw new IllegalArgumentException(name + " is not true or false but " + t);
    }

    /** An instant: its ISO text, or its epoch millisecond (the compact layout's, read in either); null for JSON null. */
    private Instant instant(String name, JsonToken t) throws IOException {
      if (t == JsonToken.VALUE_NUMBER_INT) return instants.same(Instant.ofEpochMilli(p.getLongValue()));
      return t == JsonToken.VALUE_NULL ? null : instant(text(name, t));
    }

    private Instant instant(String text) {
      return instants.same(IsoInstant.parse(text));
    }

    private void expect(String name, JsonToken t, JsonToken wanted) {
      if (t != wanted) throw new IllegalArgumentException(name + " is not " + (wanted == JsonToken.START_ARRAY ? "an array" : "an object") + " but " + t);
    }

    private List<CheckStatus> ring(JsonToken t) throws IOException {
      expect("last_n_states_ring", t, JsonToken.START_ARRAY);
      List<CheckStatus> r = new ArrayList<>(24);
      for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY; e = p.nextToken()) r.add(CheckStatus.parse(text("a ring entry", e)));
      return r;
    }

    private TreeMap<String, Integer> firing(JsonToken t) throws IOException {
      expect("firing", t, JsonToken.START_OBJECT);
      TreeMap<String, Integer> f = new TreeMap<>();
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String key = p.currentName();
        Number sev = number(p.nextToken());
        if (sev == null) throw new IllegalArgumentException("severity of " + key + " is not a number");
        f.put(key, sev.intValue());
      }
      return f;
    }

    private DerivedState.RateWindow rateWindow(JsonToken t) throws IOException {
      Object[] m = members("rate_window", t, "window_start", "events_count", "last_event_at");
      return new DerivedState.RateWindow(requiredInstant(m[0], "window_start"), requiredNumber(m[1], "events_count").longValue(),
          requiredInstant(m[2], "last_event_at"));
    }

    private DerivedState.Debounce debounce(JsonToken t) throws IOException {
      Object[] m = members("debounce_pending", t, "since", "trigger_threshold");
      return new DerivedState.Debounce(requiredInstant(m[0], "since"), requiredNumber(m[1], "trigger_threshold").intValue());
    }

    private DerivedState.Position position(JsonToken t) throws IOException {
      Object[] m = members("position", t, "cycle_id", "seq");
      return new DerivedState.Position(requiredNumber(m[0], "cycle_id").longValue(), requiredNumber(m[1], "seq").longValue());
    }

    /**
     * The members {@code names} of the object at {@code t}, in that order: a number, a string or a boolean as read, null
     * when absent or JSON null, {@link #NOT_SCALAR} for an object or an array (skipped); other members skipped.
     */
    private Object[] members(String object, JsonToken t, String... names) throws IOException {
      expect(object, t, JsonToken.START_OBJECT);
      Object[] values = new Object[names.length];
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        JsonToken u = p.nextToken();
        int i = 0;
        while (i < names.length && !names[i].equals(name)) i++;
        Object v = switch (u) {
          case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> p.getNumberValue();
          case VALUE_STRING -> p.getText();
          case VALUE_TRUE, VALUE_FALSE -> u == JsonToken.VALUE_TRUE;
          case VALUE_NULL -> null;
          default -> {
            p.skipChildren();
            yield NOT_SCALAR;
          }
        };
        if (i < names.length) values[i] = v;
      }
      return values;
    }

    private static Number requiredNumber(Object v, String name) {
      if (!(v instanceof Number n)) throw new IllegalArgumentException("missing or non-numeric " + name);
      return n;
    }

    private Instant requiredInstant(Object v, String name) {
      if (v == null) throw new IllegalArgumentException("missing " + name);
      if (v instanceof Integer || v instanceof Long) return instants.same(Instant.ofEpochMilli(((Number) v).longValue()));
      if (!(v instanceof String text)) throw new IllegalArgumentException(name + " is neither ISO text nor a whole number of epoch milliseconds");
      return instant(text);
    }

    /** {@code [cycle_id, seq, digest, kept_at epoch ms]} ({@link HistoryMark}'s compact form). */
    private HistoryMark history(JsonToken t) throws IOException {
      expect("history", t, JsonToken.START_ARRAY);
      long[] items = new long[4];
      int n = 0;
      for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY; e = p.nextToken()) {
        if (n == 4) throw new IllegalArgumentException("history mark must be [cycle_id, seq, digest, kept_at_ms], got more than 4 items");
        items[n] = requiredNumber(number(e), "history mark item " + n).longValue();
        n++;
      }
      if (n != 4) throw new IllegalArgumentException("history mark must be [cycle_id, seq, digest, kept_at_ms], got " + n + " items");
      return new HistoryMark(new DerivedState.Position(items[0], items[1]), items[2], instants.same(Instant.ofEpochMilli(items[3])));
    }
  }
}
