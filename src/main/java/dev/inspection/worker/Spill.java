package dev.inspection.worker;

import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.InvalidMessage;
import dev.inspection.worker.BatchStore.Committed;
import dev.inspection.worker.BatchStore.Part;
import dev.inspection.worker.CommitGroup.SlotCommit;
import dev.inspection.worker.StatePlanner.HistoryRow;
import dev.inspection.worker.StatePlanner.Plan;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the degraded write mode (seed 000 §7.5) holds back from a group transaction, and its wire form. Pure.
 * In the degraded mode a slot's plan keeps its current rows, derived states and alert events for every device and
 * the history rows of critical results (retention class 1) only; the other history rows — with their rollup
 * samples, which {@link HistoryRollups} derives from the same rows — are the spill: one message per slot batch on
 * the back-fill queue, written by {@link BackFiller} after recovery. While history is locked ({@link HistoryLock}) the critical
 * rows are held back too. A spilled row keeps its slot, the epoch it was
 * consumed under (history's writer_epoch), its retention class and whether the history policy keeps it.
 */
public final class Spill {
  static final int FORMAT = 1;

  /** A group split for a degraded commit: the parts to write now and, per slot, the history rows held back. */
  record Degraded(List<Part> parts, Map<Integer, Batch> spill) {}

  /**
   * One slot batch's held-back history rows; {@code committedAtMs} is when its slot batch committed (epoch ms of the
   * worker's clock; 0 = not known, from a body written before it was carried): the back-fill writes it as the rows'
   * {@code received_at}, so a back-filled row tells when its result was really taken in, not when the back-fill ran.
   */
  public record Batch(int slot, long epoch, List<HistoryRow> rows, long committedAtMs) {
    public Batch(int slot, long epoch, List<HistoryRow> rows) {
      this(slot, epoch, rows, 0);
    }
  }

  private Spill() {}

  /** Holds back every non-critical history row of {@code parts}; the rest of each plan is unchanged. */
  static Degraded split(List<Part> parts) {
    return split(parts, false);
  }

  /**
   * Holds back every history row of {@code parts}, critical ones too: history is locked ({@link HistoryLock}); the rest of each
   * plan (current rows, derived states, alert events) is unchanged.
   */
  static Degraded splitAll(List<Part> parts) {
    return split(parts, true);
  }

  private static Degraded split(List<Part> parts, boolean all) {
    List<Part> now = new ArrayList<>(parts.size());
    Map<Integer, Batch> spill = new LinkedHashMap<>();
    for (Part p : parts) {
      List<HistoryRow> keep = new ArrayList<>();
      List<HistoryRow> later = new ArrayList<>();
      for (HistoryRow h : p.plan().history()) (!all && h.retentionClass() == 1 ? keep : later).add(h);
      Plan plan = p.plan();
      now.add(new Part(p.slot(), p.epoch(), new Plan(plan.current(), keep, plan.events(), plan.next(), plan.rejected())));
      if (!later.isEmpty()) spill.put(p.slot(), new Batch(p.slot(), p.epoch(), later));
    }
    return new Degraded(now, spill);
  }

  /**
   * What must be spilled once the group committed: the held-back rows of the slots that committed, without the
   * devices PostgreSQL refused (their results are dead-lettered). A fenced slot spills nothing: its messages go
   * back to the queue for the new owner.
   */
  static List<Batch> toPublish(Degraded d, Map<Integer, SlotCommit> outcomes, long committedAtMs) {
    List<Batch> out = new ArrayList<>();
    d.spill().forEach((slot, b) -> {
      SlotCommit c = outcomes.get(slot);
      if (c == null || !(c.outcome() instanceof Committed)) return;
      List<HistoryRow> rows = b.rows().stream().filter(h -> !c.refused().containsKey(h.envelope().deviceId())).toList();
      if (!rows.isEmpty()) out.add(new Batch(slot, b.epoch(), rows, committedAtMs));
    });
    return out;
  }

  /** The message body of one spilled batch. */
  public static byte[] encode(Batch b) {
    JsonArray rows = new JsonArray();
    for (HistoryRow h : b.rows()) {
      Envelope e = h.envelope();
      // the row's payload (normalised for its profile) is what history and rollups store: it travels as the envelope's
      Envelope stored = new Envelope(e.messageId(), e.deviceId(), e.slotId(), e.slotMapVersion(), e.resourceVersion(), e.planVersion(), e.isNode(),
          e.cycleId(), e.seq(), e.collectedAt(), e.priority(), h.payload());
      rows.add(new JsonObject().put("result", stored.toJson()).put("rc", h.retentionClass()).put("keep", h.keep()));
    }
    JsonObject o = new JsonObject().put("spill", FORMAT).put("slot", b.slot()).put("epoch", b.epoch());
    if (b.committedAtMs() > 0) o.put("committed_at_ms", b.committedAtMs());
    return o.put("rows", rows).encode()
        .getBytes(StandardCharsets.UTF_8);
  }

  /** Reads a spilled batch; a body this code did not write is an {@link InvalidMessage}. */
  public static Batch decode(byte[] body) throws InvalidMessage {
    try {
      JsonObject o = new JsonObject(Buffer.buffer(body));
      if (!Integer.valueOf(FORMAT).equals(o.getInteger("spill"))) throw new InvalidMessage("unknown_schema", "not a spilled batch of format " + FORMAT);
      List<HistoryRow> rows = new ArrayList<>();
      for (Object r : o.getJsonArray("rows")) {
        JsonObject row = (JsonObject) r;
        Envelope e = Envelope.fromJson(row.getJsonObject("result"));
        rows.add(new HistoryRow(e, e.payload(), row.getInteger("rc"), row.getBoolean("keep")));
      }
      return new Batch(o.getInteger("slot"), o.getLong("epoch"), rows, o.getLong("committed_at_ms", 0L));
    } catch (RuntimeException e) {
      throw new InvalidMessage("malformed_json", "spilled batch unreadable: " + e.getMessage());
    }
  }
}
