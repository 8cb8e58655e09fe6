package dev.inspection.state;

import io.vertx.core.json.JsonArray;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * Where a device's history stands under the {@link HistoryPolicy.Kind#CHANGES} policy: the newest result
 * looked at, the digest of its payload ({@link PayloadDigest}) and when the policy last kept a result. Kept in
 * the derived state, so a new owner decides exactly as the old one would have, and a replayed result (not newer
 * than {@code position}) is never kept again. It is computed under both policies alike, so the derived state
 * does not depend on the policy.
 */
public record HistoryMark(DerivedState.Position position, long digest, Instant keptAt) {
  public HistoryMark {
    Objects.requireNonNull(position, "position");
    Objects.requireNonNull(keptAt, "keptAt");
  }

  /** A result looked at: whether it is a change (the CHANGES policy keeps it) and the mark after it. */
  public record Step(boolean changed, HistoryMark next) {}

  /**
   * A result is a change when it is newer than the mark and its payload differs from the previous result's,
   * or a heartbeat's time has passed since the last kept result; the first result of a device is a change.
   * A result not newer than the mark (a redelivery, or one overtaken by a newer result) is not a change and
   * leaves the mark as it is.
   */
  public static Step step(HistoryMark mark, DerivedState.Position position, Instant collectedAt, long digest, Duration heartbeat) {
    if (mark != null && position.compareTo(mark.position) <= 0) return new Step(false, mark);
    boolean changed = mark == null || digest != mark.digest || !collectedAt.isBefore(mark.keptAt.plus(heartbeat));
    return new Step(changed, new HistoryMark(position, digest, changed ? collectedAt : mark.keptAt));
  }

  /** Compact form for the snapshot: {@code [cycle_id, seq, digest, kept_at epoch ms]}. */
  JsonArray toJson() {
    return new JsonArray().add(position.cycleId()).add(position.seq()).add(digest).add(keptAt.toEpochMilli());
  }
}
