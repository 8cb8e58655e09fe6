package dev.inspection.scheduler;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Deciding a reshard (seed 000 §3.4, D11): whether {@code POST /api/v1/slot-map} may schedule version v+1
 * now, with its effective time and grace window, and what {@code GET /api/v1/slot-map} shows. Pure: the
 * versions and the database's clock come in as arguments.
 */
public final class ReshardPlan {
  /** The most slots a map may have (slot ids are SMALLINT; the same bound as slots.total). */
  public static final int MAX_SLOTS = 4096;

  /**
   * One version of the map; {@code windowUntil} null for the seeded version 1; {@code retiredAt} when the slots it gave
   * up (a shrink) were drained and deleted, else null.
   */
  public record MapVersion(long version, int totalSlots, Instant effectiveAt, Instant windowUntil, Instant retiredAt) {
    public MapVersion(long version, int totalSlots, Instant effectiveAt, Instant windowUntil) {
      this(version, totalSlots, effectiveAt, windowUntil, null);
    }

    JsonObject toJson(Instant now) {
      return new JsonObject().put("version", version).put("slots", totalSlots).put("effective_at", effectiveAt.toString())
          .put("window_until", windowUntil == null ? null : windowUntil.toString())
          .put("state", !effectiveAt.isAfter(now) ? (windowUntil != null && windowUntil.isAfter(now) ? "IN_WINDOW" : "IN_FORCE") : "PENDING");
    }
  }

  /** From the request time T0: the new map takes effect at T0 + effectiveAfter; the old version is accepted until T0 + windowEnd. */
  public record Settings(Duration effectiveAfter, Duration windowEnd) {}

  /** A refusal with the HTTP status it maps to and a message that says what to do. */
  public record Refusal(int status, String message) {}

  /** Either a new version or a refusal. */
  public record Outcome(MapVersion scheduled, Refusal refused) {}

  private ReshardPlan() {}

  /** The version in force at {@code now}: the newest whose effective time has come; null when none has. */
  public static MapVersion inForce(List<MapVersion> versions, Instant now) {
    MapVersion best = null;
    for (MapVersion v : versions) {
      if (!v.effectiveAt().isAfter(now) && (best == null || v.version() > best.version())) best = v;
    }
    return best;
  }

  /** The newest version, in force or not; null when there is none. */
  static MapVersion newest(List<MapVersion> versions) {
    MapVersion best = null;
    for (MapVersion v : versions) if (best == null || v.version() > best.version()) best = v;
    return best;
  }

  /** Whether {@code slots} may be scheduled now; one reshard at a time, each waiting for the previous window to end
   * and, after a shrink, for its slots to be retired. Fewer slots than in force is a shrink ({@link SlotRetire}). */
  public static Outcome schedule(List<MapVersion> versions, int slots, Instant now, Settings s) {
    if (slots < 1 || slots > MAX_SLOTS) return refuse(400, "slots must be between 1 and " + MAX_SLOTS + " (got " + slots + ")");
    MapVersion newest = newest(versions);
    if (newest == null) return refuse(409, "the installation has no slot map yet: start a worker or scheduler once (it seeds version 1 from slots.total)");
    if (newest.effectiveAt().isAfter(now) || (newest.windowUntil() != null && newest.windowUntil().isAfter(now))) {
      return refuse(409, "a reshard is in progress: version " + newest.version() + " (" + newest.totalSlots() + " slots) takes effect at "
          + newest.effectiveAt() + " and its grace window ends at " + newest.windowUntil() + "; schedule the next one after that");
    }
    if (newest.totalSlots() == slots) return refuse(409, "the slot map in force (version " + newest.version() + ") already has " + slots + " slots");
    if (retiring(versions, newest)) {
      return refuse(409, "version " + newest.version() + " gave up slots " + newest.totalSlots() + " .. " + (previousSlots(versions, newest) - 1)
          + ", which the leader is still draining and deleting (their queues must be empty of consumers: see the leader's log);"
          + " schedule the next reshard after that");
    }
    return new Outcome(new MapVersion(newest.version() + 1, slots, now.plus(s.effectiveAfter()), now.plus(s.windowEnd())), null);
  }

  /**
   * Whether {@code v} has fewer slots than the version before it and the slots beyond are not retired yet (drained and
   * deleted); a reshard is scheduled only after the previous one's slots are retired, so the version before is enough.
   */
  static boolean retiring(List<MapVersion> versions, MapVersion v) {
    Integer before = previousSlots(versions, v);
    return v.retiredAt() == null && before != null && before > v.totalSlots();
  }

  /**
   * What the API and the console show: the versions, the map in force, the pending change or open window with its
   * countdown; after a shrink's window, until its slots are retired, the change with state {@code RETIRING}.
   */
  public static JsonObject status(List<MapVersion> versions, Instant now) {
    JsonArray all = new JsonArray();
    versions.stream().sorted((a, b) -> Long.compare(b.version(), a.version())).forEach(v -> all.add(v.toJson(now)));
    MapVersion current = inForce(versions, now);
    MapVersion newest = newest(versions);
    JsonObject change = null;
    if (newest != null && newest.windowUntil() != null && (newest.windowUntil().isAfter(now) || retiring(versions, newest))) {
      change = newest.toJson(now).put("from_slots", previousSlots(versions, newest))
          .put("effective_in_ms", Math.max(0, Duration.between(now, newest.effectiveAt()).toMillis()))
          .put("window_ends_in_ms", Math.max(0, Duration.between(now, newest.windowUntil()).toMillis()));
      if (!newest.windowUntil().isAfter(now)) change.put("state", "RETIRING");
    }
    return new JsonObject().put("now", now.toString()).put("current", current == null ? null : current.toJson(now)).put("change", change)
        .put("versions", all);
  }

  private static Integer previousSlots(List<MapVersion> versions, MapVersion of) {
    MapVersion prev = null;
    for (MapVersion v : versions) if (v.version() < of.version() && (prev == null || v.version() > prev.version())) prev = v;
    return prev == null ? null : prev.totalSlots();
  }

  private static Outcome refuse(int status, String message) {
    return new Outcome(null, new Refusal(status, message));
  }
}
