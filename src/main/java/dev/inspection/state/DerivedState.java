package dev.inspection.state;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Everything a worker derives for one device from the results folded so far (seed 000 §3.2). It is what
 * {@code device_status_current.derived_snapshot} holds: the worker writes it ({@link SnapshotLayout}) in every batch
 * transaction (INV-9) and a new owner reads it back with {@link DerivedJson#decode} before consuming
 * (INV-10), so no derived value lives only in memory (INV-8, DESIGN D7). The round trip is exact: the value
 * read back equals the value written, which is what lets a new owner continue where the old one stopped.
 *
 * @param consecFailures consecutive DOWN results up to the newest one (0 after an UP)
 * @param ring the last results, oldest first, at most {@link AlertRules#flapWindow()} of them (flap detection)
 * @param lastHeartbeatAt collected_at of the newest UP result; null if none was seen
 * @param rateWindow results counted in the current rate window; null before the first result
 * @param offlinePhase the offline rule's HARD/SOFT state machine
 * @param debouncePending set while SOFT_DOWN: when the failures started and at how many they confirm
 * @param downSince collected_at of the first result of the current run of failures; null while UP
 * @param flapping whether the device is flapping (then "device.offline" is firing-suppressed)
 * @param position (cycle_id, seq) of the newest result folded in; null before the first
 * @param firing alert keys currently firing, with their severity (0..4)
 * @param history where the device's history stands ({@link HistoryMark}); null before the first result
 */
public record DerivedState(
    int consecFailures,
    List<CheckStatus> ring,
    Instant lastHeartbeatAt,
    RateWindow rateWindow,
    OfflinePhase offlinePhase,
    Debounce debouncePending,
    Instant downSince,
    boolean flapping,
    Position position,
    SortedMap<String, Integer> firing,
    HistoryMark history) {

  /** Version of the JSON layout below (the first, {@link SnapshotLayout#V1}); a reader refuses layouts it does not know. */
  public static final int SNAPSHOT_VERSION = 1;
  /** The largest ring a snapshot may carry (a sanity bound; the rules use 21). */
  public static final int MAX_RING = 256;

  /**
   * Where a result stands in its device's order (INV-5: (cycle_id, seq) only grows). Compared by cycle
   * first, then seq.
   */
  public record Position(long cycleId, long seq) implements Comparable<Position> {
    @Override
    public int compareTo(Position o) {
      int c = Long.compare(cycleId, o.cycleId);
      return c != 0 ? c : Long.compare(seq, o.seq);
    }

    JsonObject toJson() {
      return new JsonObject().put("cycle_id", cycleId).put("seq", seq);
    }
  }

  /**
   * Results counted in a tumbling window aligned to the epoch (a window of 5 minutes starts at :00, :05, …),
   * so the window a result falls in depends on its collected_at only, not on which result came first.
   */
  public record RateWindow(Instant windowStart, long eventsCount, Instant lastEventAt) {
    public RateWindow {
      Objects.requireNonNull(windowStart, "windowStart");
      Objects.requireNonNull(lastEventAt, "lastEventAt");
      if (eventsCount < 1) throw new IllegalArgumentException("a rate window counts at least one event, got " + eventsCount);
    }

    JsonObject toJson() {
      return new JsonObject().put("window_start", IsoInstant.format(windowStart)).put("events_count", eventsCount)
          .put("last_event_at", IsoInstant.format(lastEventAt));
    }
  }

  /** A failure not confirmed yet: failing since {@code since}, confirmed at {@code triggerThreshold} failures. */
  public record Debounce(Instant since, int triggerThreshold) {
    public Debounce {
      Objects.requireNonNull(since, "since");
      if (triggerThreshold < 1) throw new IllegalArgumentException("trigger threshold must be >= 1, got " + triggerThreshold);
    }

    JsonObject toJson() {
      return new JsonObject().put("since", IsoInstant.format(since)).put("trigger_threshold", triggerThreshold);
    }
  }

  public DerivedState {
    if (consecFailures < 0) throw new IllegalArgumentException("consecutive failures cannot be negative: " + consecFailures);
    Objects.requireNonNull(ring, "ring");
    ring = FlapRing.of(ring); // the bits of one long: 32 bytes (a full ring of 21 was 120 in two objects)
    if (ring.size() > MAX_RING) throw new IllegalArgumentException("ring holds " + ring.size() + " results, at most " + MAX_RING);
    Objects.requireNonNull(offlinePhase, "offlinePhase");
    Objects.requireNonNull(firing, "firing");
    if (firing.isEmpty()) {
      // nearly every device has nothing firing: one shared empty map, no TreeMap and wrapper built for it (80 bytes a
      // device at rest in a worker's memory, and two objects less for every result folded)
      firing = Collections.emptySortedMap();
    } else {
      TreeMap<String, Integer> f = new TreeMap<>();
      firing.forEach((k, v) -> {
        Objects.requireNonNull(k, "alert key");
        if (v == null || v < 0 || v > 4) throw new IllegalArgumentException("severity of " + k + " must be 0..4, got " + v);
        f.put(k, v);
      });
      firing = Collections.unmodifiableSortedMap(f);
    }
    // The machine's invariants, checked here so that a corrupt snapshot is refused when it is loaded
    // rather than producing a wrong alert later.
    if (offlinePhase == OfflinePhase.UP) {
      if (consecFailures != 0 || downSince != null || debouncePending != null) {
        throw new IllegalArgumentException("an UP device has no failures, down_since or debounce (failures "
            + consecFailures + ", down_since " + downSince + ", debounce " + debouncePending + ")");
      }
    } else {
      if (consecFailures < 1 || downSince == null) {
        throw new IllegalArgumentException(offlinePhase + " needs at least one failure and a down_since (failures "
            + consecFailures + ", down_since " + downSince + ")");
      }
      if ((offlinePhase == OfflinePhase.SOFT_DOWN) != (debouncePending != null)) {
        throw new IllegalArgumentException("debounce_pending is set exactly while SOFT_DOWN (state " + offlinePhase + ")");
      }
    }
    if (firing.containsKey(DeviceFold.OFFLINE) && offlinePhase != OfflinePhase.HARD_DOWN) {
      throw new IllegalArgumentException(DeviceFold.OFFLINE + " fires only while HARD_DOWN (state " + offlinePhase + ")");
    }
    if (flapping != firing.containsKey(DeviceFold.FLAPPING)) {
      throw new IllegalArgumentException("flapping (" + flapping + ") disagrees with the firing set " + firing);
    }
  }

  /** A device nothing is known about yet: up, no results, nothing firing. */
  public static DerivedState initial() {
    return new DerivedState(0, List.of(), null, null, OfflinePhase.UP, null, null, false, null, new TreeMap<>(), null);
  }

  /** The same state with another history mark. */
  public DerivedState withHistory(HistoryMark mark) {
    return new DerivedState(consecFailures, ring, lastHeartbeatAt, rateWindow, offlinePhase, debouncePending, downSince, flapping, position,
        firing, mark);
  }

  /** Nagios' state type of the offline rule: SOFT while a failure is unconfirmed, HARD otherwise. */
  public String stateType() {
    return offlinePhase.stateType();
  }

  /**
   * The snapshot in the first layout ({@link SnapshotLayout#V1}, as a worker set to it stores it in {@code
   * derived_snapshot}), which the device API shows whatever the stored layout. Absent values are left out rather than
   * written as null. The ring is written oldest first as a plain array (no ring_pos: the list is already in order).
   */
  public JsonObject toJson() {
    JsonArray r = new JsonArray();
    ring.forEach(s -> r.add(s.name()));
    JsonObject f = new JsonObject();
    firing.forEach(f::put);
    JsonObject j = new JsonObject()
        .put("v", SNAPSHOT_VERSION)
        .put("consec_failure_count", consecFailures)
        .put("last_n_states_ring", r)
        .put("offline_state", offlinePhase.name())
        .put("state_type", offlinePhase.stateType())
        .put("flapping", flapping)
        .put("firing", f);
    if (lastHeartbeatAt != null) j.put("last_heartbeat_at", IsoInstant.format(lastHeartbeatAt));
    if (rateWindow != null) j.put("rate_window", rateWindow.toJson());
    if (debouncePending != null) j.put("debounce_pending", debouncePending.toJson());
    if (downSince != null) j.put("down_since", IsoInstant.format(downSince));
    if (position != null) j.put("position", position.toJson());
    if (history != null) j.put("history", history.toJson());
    return j;
  }

  /**
   * Reads a snapshot of either layout ({@link DerivedJson#decode} reads its text). {@code null} (a device
   * whose row has no snapshot yet) gives {@link #initial()}. A snapshot that is malformed or breaks the state's
   * invariants is refused with an {@link IllegalArgumentException} that says which field is wrong; "state_type" is
   * derived and ignored.
   */
  public static DerivedState fromJson(JsonObject j) {
    return j == null ? initial() : DerivedJson.decode(j.encode());
  }
}
