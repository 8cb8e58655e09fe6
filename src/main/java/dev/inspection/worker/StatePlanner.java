package dev.inspection.worker;

import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.state.AlertEvent;
import dev.inspection.state.AlertRules;
import dev.inspection.state.Check;
import dev.inspection.state.DerivedState;
import dev.inspection.state.DeviceFold;
import dev.inspection.state.HistoryMark;
import dev.inspection.state.HistoryPolicies;
import dev.inspection.state.HistoryPolicy;
import dev.inspection.state.PayloadDigest;
import dev.inspection.state.PayloadProfile;
import dev.inspection.state.PayloadProfiles;
import dev.inspection.state.RollupFold;
import dev.inspection.state.SnapshotLayout;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * What one slot's batch writes, computed before the transaction (pure: no I/O, no clock):
 * <ul>
 *   <li>per device, the newest result with its payloads folded by the device's merge profile (D5) and
 *       its derived state after folding every result in (cycle_id, seq) order (D7, INV-8/9) — the
 *       database applies the same merge and keeps the row only if it is newer;</li>
 *   <li>the results for history, with their retention class: every one, or under the device's profile's
 *       {@link HistoryPolicy} only the changes and heartbeats ({@link HistoryMark}, kept in the derived state);</li>
 *   <li>every result for the per-minute rollups ({@link RollupFold}), whatever history keeps;</li>
 *   <li>the alert events the fold produced (idempotent by their unique key, D4).</li>
 * </ul>
 * The slot's in-memory derived states change only after the transaction committed ({@link Plan#next}).
 */
public final class StatePlanner {

  /**
   * The newest result of a device in this batch, the merged payload and the derived state to store. For a profile
   * with a device time, {@code guarded} holds the updates the database applies one by one onto the stored payload
   * ({@link PayloadProfile#notOlder}: a fold cannot say which of them an older stored time would skip); {@code payload}
   * is then what a first write stores. Null for other profiles.
   */
  public record CurrentRow(Envelope newest, JsonObject payload, String derived, PayloadProfile profile, List<JsonObject> guarded) {}

  /**
   * A result of the batch: the (normalised) payload, 1 (critical) or 2 (others), and whether history keeps it
   * (the rollups count every result). {@code newMinute}: no result of the device in this result's minute can have been
   * counted in the rollups before this batch, as far as the slot's memory knows: the device's newest result before the
   * batch (its history mark) has a cycle_id before the minute began, and a result's cycle_id is never before its
   * collected_at (the probe's outbox takes the larger of the two, {@code Outbox#append}). The rollup row is then written
   * with a plain insert ({@link HistoryRollups#WRITE_FRESH}); a wrong guess (a row written by a slot's earlier owner, a
   * producer numbering cycles otherwise) fails on the key and the batch is written again with the upsert. False when the
   * memory does not know the device.
   */
  public record HistoryRow(Envelope envelope, JsonObject payload, int retentionClass, boolean keep, boolean newMinute) {
    /** A result whose rollup row may exist already (the upsert): what spilled batches and tests write. */
    public HistoryRow(Envelope envelope, JsonObject payload, int retentionClass, boolean keep) {
      this(envelope, payload, retentionClass, keep, false);
    }

    public RollupFold.Sample sample() {
      return new RollupFold.Sample(envelope.deviceId(), envelope.cycleId(), envelope.seq(), envelope.collectedAt(), payload);
    }
  }

  /** The whole write of a slot's batch. {@code history}: every result, each saying whether history keeps it. */
  public record Plan(List<CurrentRow> current, List<HistoryRow> history, List<AlertEvent> events, Map<String, DerivedState> next,
      Map<String, String> rejected) {
    public boolean isEmpty() {
      return history.isEmpty();
    }

    /** The results history keeps. */
    public List<HistoryRow> kept() {
      return history.stream().filter(HistoryRow::keep).toList();
    }
  }

  private StatePlanner() {}

  /**
   * @param batch valid envelopes whose payloads are already normalised for their profile
   * @param memory the slot's derived states (loaded at takeover, updated after every commit)
   * @param infos priority and profile of every device in the batch
   * @param rules alert rules by device priority
   */
  public static Plan plan(List<Envelope> batch, Map<String, DerivedState> memory, Map<String, DeviceDirectory.Info> infos,
      IntFunction<AlertRules> rules) {
    return plan(batch, memory, infos, rules, HistoryPolicies.EVERY);
  }

  /** @param histories the history policy of each payload profile */
  public static Plan plan(List<Envelope> batch, Map<String, DerivedState> memory, Map<String, DeviceDirectory.Info> infos,
      IntFunction<AlertRules> rules, HistoryPolicies histories) {
    return plan(batch, memory, infos, rules, histories, SnapshotLayout.COMPACT);
  }

  /** @param layout the layout the derived snapshots are written in */
  public static Plan plan(List<Envelope> batch, Map<String, DerivedState> memory, Map<String, DeviceDirectory.Info> infos,
      IntFunction<AlertRules> rules, HistoryPolicies histories, SnapshotLayout layout) {
    // sized for the batch up front (a device is seldom twice in one): growing them was about 1 % of the event loops' samples at capacity
    int size = HashSizes.capacityFor(batch.size());
    Map<String, List<Envelope>> byDevice = new LinkedHashMap<>(size);
    for (Envelope e : batch) byDevice.computeIfAbsent(e.deviceId(), k -> new ArrayList<>(2)).add(e);
    List<CurrentRow> current = new ArrayList<>(byDevice.size());
    List<HistoryRow> history = new ArrayList<>(batch.size());
    List<AlertEvent> events = new ArrayList<>();
    Map<String, DerivedState> next = new HashMap<>(size);
    Map<String, String> rejected = new HashMap<>();
    for (Map.Entry<String, List<Envelope>> d : byDevice.entrySet()) {
      try {
        planDevice(d.getKey(), d.getValue(), memory, infos, rules, histories, layout, new Out(current, history, events, next));
      } catch (RuntimeException e) {
        // deterministic: retrying would fail the same way, so the device's messages are set aside with the reason
        rejected.put(d.getKey(), e.getClass().getSimpleName() + ": " + e.getMessage());
      }
    }
    return new Plan(current, history, events, next, rejected);
  }

  /** The first millisecond of the rollups' minute of {@code at} ({@link RollupFold#minuteOf}). */
  static long minuteStartMs(Instant at) {
    return RollupFold.minuteOf(at).toEpochMilli();
  }

  /** Where the devices' rows are collected. */
  private record Out(List<CurrentRow> current, List<HistoryRow> history, List<AlertEvent> events, Map<String, DerivedState> next) {}

  private static void planDevice(String device, List<Envelope> items, Map<String, DerivedState> memory, Map<String, DeviceDirectory.Info> infos,
      IntFunction<AlertRules> rules, HistoryPolicies histories, SnapshotLayout layout, Out out) {
    List<HistoryRow> hist = new ArrayList<>();
    List<AlertEvent> evs = new ArrayList<>();
    items.sort(Comparator.comparingLong(Envelope::cycleId).thenComparingLong(Envelope::seq));
    DeviceDirectory.Info info = infos.get(device);
    DerivedState before = memory.get(device);
    DerivedState state = before == null ? DerivedState.initial() : before;
    List<JsonObject> payloads = new ArrayList<>();
    HistoryPolicy policy = histories.forProfile(info.profile().name());
    HistoryMark mark = state.history();
    // the device's newest result before this batch; none known: every minute may hold rows already
    long knownCycle = mark == null ? Long.MAX_VALUE : mark.position().cycleId();
    for (Envelope e : items) {
      payloads.add(e.payload());
      HistoryMark.Step step = HistoryMark.step(mark, new DerivedState.Position(e.cycleId(), e.seq()), e.collectedAt(),
          PayloadDigest.of(e.payload(), policy.ignoredFields()), policy.heartbeat());
      mark = step.next();
      // the class follows the message's own queue, so a redelivery always lands on the same key
      hist.add(new HistoryRow(e, e.payload(), e.priority() == Priority.HIGH ? 1 : 2, policy.keeps(step.changed()),
          minuteStartMs(e.collectedAt()) > knownCycle));
      // only results that report UP or DOWN feed the derived state and the alerts; others are stored as they are
      if (e.payload().getValue("status") instanceof String st && (st.equals("UP") || st.equals("DOWN"))) {
        DeviceFold.Result r = DeviceFold.apply(state, Check.fromPayload(e.deviceId(), e.cycleId(), e.seq(), e.collectedAt(), e.payload()),
            rules.apply(info.priority()));
        state = r.next();
        evs.addAll(r.events());
      }
    }
    // one Position object where both say the same (most devices): a worker holds a million of these
    if (mark != null && mark.position().equals(state.position())) mark = new HistoryMark(state.position(), mark.digest(), mark.keptAt());
    state = state.withHistory(mark);
    boolean changed = !state.equals(before == null ? DerivedState.initial() : before);
    String derived = before == null && !changed ? null : layout.encode(state);
    // the default profile is full-state: the newest payload is the state (seed 000's "newest seq wins");
    // other profiles fold the batch with their rules, and the upsert merges the fold the same way
    JsonObject payload = info.profile() == PayloadProfiles.DEFAULT ? items.get(items.size() - 1).payload() : info.profile().fold(payloads);
    List<JsonObject> guarded = info.profile().deviceTimeField() == null ? null : info.profile().notOlder(payloads);
    CurrentRow row = new CurrentRow(items.get(items.size() - 1), payload, derived, info.profile(), guarded);
    // nothing is added before everything of this device was computed
    if (changed) out.next().put(device, state);
    out.current().add(row);
    out.history().addAll(hist);
    out.events().addAll(evs);
  }
}
