package dev.inspection.scheduler;

import dev.inspection.control.SlotState;
import dev.inspection.scheduler.ControlStore.SlotRow;
import dev.inspection.scheduler.ControlStore.WorkerRow;
import io.vertx.core.json.JsonObject;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * What the fleet last measured of each slot's load — message rate, deliveries waiting, batch time — kept
 * across moves (pure). A worker reports its slots with every heartbeat, but a slot it has just received has no
 * rate or batch time yet: its first heartbeat leaves them out, and until it has measured them the slot keeps the
 * figures its previous owner reported. Reading a fresh owner's missing figures as zero made a slot light the
 * moment it moved, so the scale-out kept moving slots towards the joining worker well past its share (a zombie
 * drill at 256 slots ended with 253 slots on the new worker and 3 on the old one).
 *
 * <p>A report counts only for the slots the reporting worker owns in the lease table (a dead or deposed worker's
 * last heartbeat says nothing about slots that moved on).
 */
final class SlotFigures {
  /** One slot's measured load; a NaN rate or batch time is not measured yet. */
  record Figures(double rate, long backlog, double ms) {
    static final Figures NONE = new Figures(Double.NaN, 0, Double.NaN);

    double rateOrZero() {
      return Double.isNaN(rate) ? 0 : rate;
    }

    double msOrZero() {
      return Double.isNaN(ms) ? 0 : ms;
    }
  }

  private SlotFigures() {}

  /** The figures after one read of the workers' heartbeats; {@code before} is not changed. */
  static Map<Integer, Figures> fold(Map<Integer, Figures> before, Collection<SlotRow> slots, Collection<WorkerRow> workers) {
    Map<Integer, String> owners = new HashMap<>();
    for (SlotRow s : slots) if (s.owner() != null) owners.put(s.slot(), s.owner());
    Map<Integer, Figures> out = new HashMap<>(before);
    for (WorkerRow w : workers) {
      JsonObject perSlot = w.metrics() == null ? null : w.metrics().getValue("slots") instanceof JsonObject j ? j : null;
      if (perSlot == null) continue;
      for (String k : perSlot.fieldNames()) {
        int slot;
        try {
          slot = Integer.parseInt(k);
        } catch (NumberFormatException e) {
          continue; // a malformed entry only loses its figures
        }
        if (!w.id().equals(owners.get(slot)) || !(perSlot.getValue(k) instanceof JsonObject r)) continue;
        Figures was = out.getOrDefault(slot, Figures.NONE);
        out.put(slot, new Figures(number(r, "rate", was.rate()), (long) number(r, "backlog", 0), number(r, "ms", was.ms())));
      }
    }
    return out;
  }

  /**
   * The slots whose owner (in the lease table, the slot ACTIVE, the owner live, heartbeat no older than {@code maxAgeMs}) said in that heartbeat
   * that every lane of the slot consumes with room under its prefetch ({@code "quiet": true}): nothing of them waits
   * ready in the broker, so the queue sampler need not ask (a worker that does not say so is sampled as before).
   */
  static Set<Integer> quiet(Collection<SlotRow> slots, Collection<WorkerRow> workers, long maxAgeMs) {
    Map<String, JsonObject> reports = new HashMap<>();
    for (WorkerRow w : workers) {
      if (w.state().live() && w.heartbeatAgeMs() <= maxAgeMs && w.metrics() != null && w.metrics().getValue("slots") instanceof JsonObject j) {
        reports.put(w.id(), j);
      }
    }
    Set<Integer> out = new HashSet<>();
    for (SlotRow s : slots) {
      JsonObject perSlot = s.owner() == null || s.expired() || s.state() != SlotState.ACTIVE ? null : reports.get(s.owner());
      if (perSlot != null && perSlot.getValue(Integer.toString(s.slot())) instanceof JsonObject r && Boolean.TRUE.equals(r.getValue("quiet"))) out.add(s.slot());
    }
    return out;
  }

  private static double number(JsonObject r, String key, double otherwise) {
    return r.getValue(key) instanceof Number n && Double.isFinite(n.doubleValue()) ? n.doubleValue() : otherwise;
  }
}
