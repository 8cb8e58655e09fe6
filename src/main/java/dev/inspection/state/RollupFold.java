package dev.inspection.state;

import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The per-minute rollups of a batch (seed 000's {@code device_status_rollup_1m}), computed in memory from the
 * rows already stored for the batch's (minute, device) keys. Every result is counted exactly once: a rollup row
 * carries the (cycle_id, seq) of the results it counted, and a result already among them (a redelivery, a
 * replay) is skipped. So rollups do not depend on what history stores (issue 11's history policies), and
 * replaying a day changes none of them. Pure: no I/O, no clock.
 *
 * <p>Per (minute, device): {@code samples} and {@code down} count the new results; {@code changes} counts status
 * changes between consecutive new results in (cycle_id, seq) order, plus one when the first of them differs from
 * the stored last state; the last state and payload follow the newest result, so an older result arriving late
 * is counted but does not replace them.
 */
public final class RollupFold {
  /** A rollup row's status column is this wide; longer statuses are cut. */
  public static final int STATE_WIDTH = 32;

  private RollupFold() {}

  /** The minute a result collected at {@code at} is counted in: its rollup row's {@code minute_bucket}. */
  public static Instant minuteOf(Instant at) {
    return at.truncatedTo(ChronoUnit.MINUTES);
  }

  /** A rollup row's key. */
  public record Key(Instant minute, String deviceId) {}

  /** One result as the rollups see it. */
  public record Sample(String deviceId, long cycleId, long seq, Instant collectedAt, JsonObject payload) {
    public Key key() {
      return new Key(minuteOf(collectedAt), deviceId);
    }

    /** What {@code status_payload->>'status'} says, at most {@link #STATE_WIDTH} characters. */
    String state() {
      Object v = payload.getValue("status");
      if (v == null) return null;
      String s = v instanceof String str ? str : v instanceof JsonObject o ? o.encode() : String.valueOf(v);
      return s.length() > STATE_WIDTH ? s.substring(0, STATE_WIDTH) : s;
    }
  }

  /** A stored rollup row (what the fold reads of it). {@code seenCycle}/{@code seenSeq}: the results it counted. */
  public record Stored(int samples, int down, int changes, String lastState, Long lastCycle, Long lastSeq, long[] seenCycle, long[] seenSeq) {
    public Stored {
      seenCycle = seenCycle == null ? new long[0] : seenCycle;
      seenSeq = seenSeq == null ? new long[0] : seenSeq;
      if (seenCycle.length != seenSeq.length) throw new IllegalArgumentException("seen cycle and seq lists differ in length");
    }
  }

  /**
   * A rollup row to write. {@code lastPayload} null: keep the stored last state, payload and position (then
   * {@code lastCycle}/{@code lastSeq} are null too). {@code firstState}: the state of the oldest new result.
   * {@code seenCycle}/{@code seenSeq}: the stored row's list, then the new results in (cycle_id, seq) order, so with no
   * stored row the first entry is the oldest new result (the worker's rollup statement relies on it).
   */
  public record Row(Key key, int samples, int down, int changes, String firstState, String lastState, JsonObject lastPayload, Long lastCycle,
      Long lastSeq, long[] seenCycle, long[] seenSeq) {
    public boolean takesLast() {
      return lastPayload != null;
    }
  }

  /** The rows to write for {@code samples}; keys none of whose samples is new are left out. */
  public static List<Row> fold(Map<Key, Stored> stored, List<Sample> samples) {
    Map<Key, List<Sample>> byKey = new LinkedHashMap<>();
    for (Sample s : samples) byKey.computeIfAbsent(s.key(), k -> new ArrayList<>()).add(s);
    List<Row> rows = new ArrayList<>(byKey.size());
    for (Map.Entry<Key, List<Sample>> e : byKey.entrySet()) {
      Row r = row(e.getKey(), stored.get(e.getKey()), e.getValue());
      if (r != null) rows.add(r);
    }
    return rows;
  }

  private record Pos(long cycle, long seq) {}

  private static Row row(Key key, Stored old, List<Sample> items) {
    Set<Pos> seen = new HashSet<>();
    if (old != null) for (int i = 0; i < old.seenCycle().length; i++) seen.add(new Pos(old.seenCycle()[i], old.seenSeq()[i]));
    List<Sample> fresh = new ArrayList<>(items.size());
    for (Sample s : items) if (seen.add(new Pos(s.cycleId(), s.seq()))) fresh.add(s);
    if (fresh.isEmpty()) return null;
    fresh.sort(Comparator.comparingLong(Sample::cycleId).thenComparingLong(Sample::seq));
    int down = 0;
    int changes = 0;
    String prev = null;
    for (int i = 0; i < fresh.size(); i++) {
      String st = fresh.get(i).state();
      if ("DOWN".equals(st)) down++;
      if (i > 0 && !Objects.equals(prev, st)) changes++;
      prev = st;
    }
    Sample first = fresh.get(0);
    Sample last = fresh.get(fresh.size() - 1);
    if (old != null && old.lastState() != null && !old.lastState().equals(first.state())) changes++;
    boolean takeLast = old == null || old.lastCycle() == null
        || Arrays.compare(new long[] {last.cycleId(), last.seq()}, new long[] {old.lastCycle(), old.lastSeq() == null ? Long.MIN_VALUE : old.lastSeq()}) > 0;
    int n = old == null ? 0 : old.seenCycle().length;
    long[] cycles = old == null ? new long[fresh.size()] : Arrays.copyOf(old.seenCycle(), n + fresh.size());
    long[] seqs = old == null ? new long[fresh.size()] : Arrays.copyOf(old.seenSeq(), n + fresh.size());
    for (int i = 0; i < fresh.size(); i++) {
      cycles[n + i] = fresh.get(i).cycleId();
      seqs[n + i] = fresh.get(i).seq();
    }
    int samples = (old == null ? 0 : old.samples()) + fresh.size();
    int downs = (old == null ? 0 : old.down()) + down;
    int changed = (old == null ? 0 : old.changes()) + changes;
    return takeLast
        ? new Row(key, samples, downs, changed, first.state(), last.state(), last.payload(), last.cycleId(), last.seq(), cycles, seqs)
        : new Row(key, samples, downs, changed, first.state(), old.lastState(), null, null, null, cycles, seqs);
  }
}
