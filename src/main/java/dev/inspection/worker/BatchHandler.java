package dev.inspection.worker;

import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.InvalidMessage;
import dev.inspection.messaging.ResultBatch;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.Topology;
import dev.inspection.state.AlertRules;
import dev.inspection.state.DerivedState;
import dev.inspection.state.HistoryPolicies;
import dev.inspection.state.PayloadProfile;
import dev.inspection.state.PayloadProfiles;
import dev.inspection.state.SnapshotLayout;
import dev.inspection.worker.DeadLetterPublisher.DeadLetter;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * Turns one slot's batch of deliveries into what to write and what to set aside (D8: one bad result is
 * dead-lettered alone, the rest commit): each body is parsed ({@link ResultBatch#parse}: a v2 message holds
 * one result, a v3 message several, each checked on its own) and each result must pass the
 * {@link ResultGuard} (its device hashes to this slot, else {@code wrong_slot}; its cycle_id is not too far
 * ahead of the clock, else {@code future_cycle}); the devices are looked up;
 * each payload is normalised by its device's profile ({@code bad_payload}); then {@link StatePlanner#plan}
 * (a device it rejects: {@code unprocessable}). The guard also refuses what PostgreSQL would refuse
 * ({@code invalid_payload}, {@code bad_field}); what it cannot foresee is found by splitting the commit, and
 * {@link #refused} turns those devices' results into {@code db_rejected} letters (D9). Holds the slot's derived
 * state (D7), which follows the database: it changes only through {@link #committed}, and a device's snapshot loaded at
 * the takeover is read into its state at the device's first result (the state the previous owner committed).
 */
public final class BatchHandler {

  /** What the handler reads of a delivery. */
  public interface Received {
    byte[] body();

    Priority priority();

    String routingKey();
  }

  /** Priority and payload profile of devices ({@link DeviceDirectory#lookup}); {@code queue}: the fallback priority by device. */
  public interface Lookup {
    Future<Map<String, DeviceDirectory.Info>> infos(Collection<String> ids, Map<String, Priority> queue);
  }

  /** A valid result for this slot, the delivery that carried it, and its own body (for a dead letter later). */
  public record Valid<D>(D delivery, Envelope envelope, ResultBatch.Item item) {}

  /** A result to set aside (a whole message when the message itself is bad): publish its letter, then ack the delivery. */
  public record Dead<D>(D delivery, DeadLetter letter) {}

  /** A batch after parsing. */
  public record Parsed<D>(List<Valid<D>> valid, List<Dead<D>> dead) {}

  /** A batch ready to commit: the plan ({@code null}: nothing to write), the results to commit, and the dead letters. */
  public record Handled<D>(StatePlanner.Plan plan, List<Valid<D>> toCommit, List<Dead<D>> dead) {}

  private final int slot;
  private final ResultGuard guard;
  private final Clock clock;
  private final Limits limits;
  private final Topology topology;
  private final Lookup lookup;
  private final IntFunction<AlertRules> rules;
  private final HistoryPolicies histories;
  private final SnapshotLayout layout;
  private final Map<String, DerivedState> memory;
  /** The snapshots loaded at the takeover of the devices without a result since (null once none is left). */
  private Map<String, String> loaded;

  /** Largest v2 message (one result) and largest v3 message (a batch of results), in bytes. */
  public record Limits(int maxResultBytes, int maxBatchBytes) {}

  public BatchHandler(ResultGuard guard, Clock clock, Limits limits, Topology topology, Lookup lookup, IntFunction<AlertRules> rules,
      HistoryPolicies histories, SnapshotLayout layout, Map<String, String> loaded) {
    this.histories = histories;
    this.layout = layout;
    this.slot = guard.slot();
    this.guard = guard;
    this.clock = clock;
    this.limits = limits;
    this.topology = topology;
    this.lookup = lookup;
    this.rules = rules;
    // the loaded texts are taken over (the slot's alone), and each is removed as it is read
    this.loaded = loaded.isEmpty() ? null : loaded;
    this.memory = new HashMap<>(HashSizes.capacityFor(loaded.size()));
  }

  /** Parses, looks up, normalises and plans; the lookup is the only step that can fail (a database error). */
  public <D extends Received> Future<Handled<D>> handle(List<D> batch) {
    return plan(parse(batch));
  }

  /** The results that are valid envelopes of this slot (and not from the future), and the others with their reason. */
  public <D extends Received> Parsed<D> parse(List<D> batch) {
    List<Valid<D>> valid = new ArrayList<>(batch.size());
    List<Dead<D>> dead = new ArrayList<>();
    long now = clock.millis();
    for (D d : batch) {
      List<ResultBatch.Item> items;
      try {
        items = ResultBatch.parse(d.body(), limits.maxResultBytes(), limits.maxBatchBytes());
      } catch (InvalidMessage im) {
        dead.add(dead(d, d.body(), im.reason, im.getMessage()));
        continue;
      }
      for (ResultBatch.Item item : items) {
        try {
          if (item.invalid() != null) throw item.invalid();
          Envelope e = item.envelope();
          guard.check(e, now);
          valid.add(new Valid<>(d, e, item));
        } catch (ResultGuard.Forward f) {
          dead.add(new Dead<>(d, new DeadLetter(f.restamped.toBytes(), f.reason, f.getMessage(), d.routingKey(), topology.queue(slot, d.priority()),
              topology.routingKey(f.restamped.slotId(), d.priority()))));
        } catch (InvalidMessage im) {
          dead.add(dead(d, item.body(), im.reason, im.getMessage()));
        }
      }
    }
    return new Parsed<>(valid, dead);
  }

  /**
   * The write of the parsed batch. The device's profile decides how its payload is normalised and merged;
   * a payload its profile cannot read is dead-lettered like any other bad input.
   */
  public <D extends Received> Future<Handled<D>> plan(Parsed<D> parsed) {
    if (parsed.valid().isEmpty()) return Future.succeededFuture(new Handled<>(null, List.of(), parsed.dead()));
    Map<String, Priority> queueOf = new HashMap<>(HashSizes.capacityFor(parsed.valid().size()));
    for (Valid<D> v : parsed.valid()) queueOf.put(v.envelope().deviceId(), v.delivery().priority());
    return lookup.infos(queueOf.keySet(), queueOf).map(listed -> {
      Map<String, DeviceDirectory.Info> infos = pushedProfiles(listed, parsed.valid());
      List<Dead<D>> dead = new ArrayList<>(parsed.dead());
      List<Valid<D>> ready = new ArrayList<>(parsed.valid().size());
      for (Valid<D> v : parsed.valid()) {
        DeviceDirectory.Info info = infos.get(v.envelope().deviceId());
        try {
          ready.add(new Valid<>(v.delivery(), normalize(v.envelope(), info), v.item()));
        } catch (IllegalArgumentException bad) {
          dead.add(dead(v.delivery(), v.item().body(), "bad_payload", "payload does not fit the device's profile '" + info.profile().name() + "': " + bad.getMessage()));
        }
      }
      if (ready.isEmpty()) return new Handled<>(null, List.of(), dead);
      for (Valid<D> v : ready) read(v.envelope().deviceId());
      StatePlanner.Plan plan = StatePlanner.plan(ready.stream().map(Valid::envelope).toList(), memory, infos, rules, histories, layout);
      List<Valid<D>> toCommit = new ArrayList<>(ready.size());
      for (Valid<D> v : ready) {
        String why = plan.rejected().get(v.envelope().deviceId());
        if (why == null) toCommit.add(v);
        else dead.add(dead(v.delivery(), v.item().body(), "unprocessable", why));
      }
      return new Handled<>(plan.isEmpty() ? null : plan, toCommit, dead);
    });
  }

  /**
   * A device the inventory does not list whose results name a known profile in {@code payload_profile} (frames
   * pushed to a probe's ingest endpoint, issue 13) is merged with that profile; the inventory's choice wins for
   * devices it lists, and an unknown name keeps the default.
   */
  static <D extends Received> Map<String, DeviceDirectory.Info> pushedProfiles(Map<String, DeviceDirectory.Info> infos, List<Valid<D>> valid) {
    Map<String, DeviceDirectory.Info> out = null;
    for (Valid<D> v : valid) {
      DeviceDirectory.Info info = infos.get(v.envelope().deviceId());
      if (info == null || info.known() || info.profile() != PayloadProfiles.DEFAULT) continue;
      JsonObject payload = v.envelope().payload();
      if (payload == null || !(payload.getValue(PayloadProfiles.PROFILE_FIELD) instanceof String name)) continue;
      for (PayloadProfile p : PayloadProfiles.all()) {
        if (p != PayloadProfiles.DEFAULT && p.name().equals(name)) {
          if (out == null) out = new HashMap<>(infos);
          out.put(v.envelope().deviceId(), new DeviceDirectory.Info(info.priority(), p, false));
        }
      }
    }
    return out == null ? infos : out;
  }

  /**
   * The results of the devices PostgreSQL refused (D9, found by splitting the group: {@link PoisonSplitter}) as
   * dead letters {@code db_rejected}, each with the SQLSTATE and PostgreSQL's message; their batch-mates were
   * committed without them.
   */
  public <D extends Received> List<Dead<D>> refused(List<Valid<D>> toCommit, Map<String, DbErrors.DbError> refused) {
    if (refused.isEmpty()) return List.of();
    List<Dead<D>> out = new ArrayList<>();
    for (Valid<D> v : toCommit) {
      DbErrors.DbError e = refused.get(v.envelope().deviceId());
      if (e == null) continue;
      out.add(dead(v.delivery(), v.item().body(), "db_rejected", "PostgreSQL refused the results of device " + v.envelope().deviceId()
          + " in this batch (" + e.describe() + "); the other results of the batch were committed. Replay it once the cause is fixed"));
    }
    return out;
  }

  /** INV-8: memory follows the database, never the other way round. */
  public void committed(StatePlanner.Plan plan) {
    memory.putAll(plan.next());
  }

  /** A device's derived state as this owner holds it. */
  public DerivedState derived(String deviceId) {
    DerivedState s = memory.get(deviceId);
    if (s != null || loaded == null) return s;
    String text = loaded.get(deviceId);
    return text == null ? null : SnapshotLoader.stateOf(slot, deviceId, text);
  }

  /**
   * A device's loaded snapshot into its state, at its first result: the state its previous owner committed, so memory
   * still follows the database. An unreadable one is logged and dropped (the device's counters start again).
   */
  private void read(String deviceId) {
    if (loaded == null) return;
    // the loaded map's own key is kept: the device directory holds the same id object, the result's is a copy
    loaded.computeIfPresent(deviceId, (id, text) -> {
      DerivedState s = SnapshotLoader.stateOf(slot, id, text);
      if (s != null) memory.put(id, s);
      return null; // read, and dropped
    });
    if (loaded.isEmpty()) loaded = null;
  }

  private <D extends Received> Dead<D> dead(D d, byte[] body, String reason, String detail) {
    return new Dead<>(d, new DeadLetter(body, reason, detail, d.routingKey(), topology.queue(slot, d.priority())));
  }

  private static Envelope normalize(Envelope e, DeviceDirectory.Info info) {
    JsonObject payload = info.profile().normalize(e.payload());
    if (payload == e.payload()) return e;
    return new Envelope(e.messageId(), e.deviceId(), e.slotId(), e.slotMapVersion(), e.resourceVersion(), e.planVersion(),
        e.isNode(), e.cycleId(), e.seq(), e.collectedAt(), e.priority(), payload);
  }
}
