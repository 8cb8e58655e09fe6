package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.InvalidMessage;
import dev.inspection.messaging.Priority;
import dev.inspection.state.AlertRules;
import dev.inspection.state.PayloadProfiles;
import dev.inspection.worker.BatchStore.Committed;
import dev.inspection.worker.BatchStore.Fenced;
import dev.inspection.worker.BatchStore.Part;
import dev.inspection.worker.CommitGroup.SlotCommit;
import dev.inspection.worker.StatePlanner.HistoryRow;
import dev.inspection.worker.StatePlanner.Plan;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the degraded mode writes now and what it spills, and the spill's wire form. */
class SpillTest {
  private static Plan plan(int slot, Map<String, Priority> devices) {
    List<Envelope> batch = new ArrayList<>();
    Map<String, DeviceDirectory.Info> infos = new HashMap<>();
    devices.forEach((d, p) -> {
      for (int seq = 1; seq <= 2; seq++) {
        batch.add(new Envelope(Envelope.messageId("n", 1000, d, seq), d, slot, 1, 1, 1, "n", 1000, seq, Instant.ofEpochMilli(1000 + seq), p,
            new JsonObject().put("status", seq == 1 ? "UP" : "DOWN")));
      }
      infos.put(d, new DeviceDirectory.Info(p == Priority.HIGH ? 1 : 2, PayloadProfiles.DEFAULT, false));
    });
    return StatePlanner.plan(batch, Map.of(), infos, AlertRules::forPriority);
  }

  @Test
  void degradedKeepsEveryCurrentRowAndAlertButOnlyCriticalHistory() {
    Plan p0 = plan(0, Map.of("crit", Priority.HIGH, "norm", Priority.NORMAL));
    Plan p1 = plan(1, Map.of("other", Priority.NORMAL));
    Spill.Degraded d = Spill.split(List.of(new Part(0, 7, p0), new Part(1, 8, p1)));
    Plan now0 = d.parts().get(0).plan();
    assertEquals(p0.current(), now0.current());
    assertEquals(p0.events(), now0.events());
    assertEquals(p0.next(), now0.next());
    assertEquals(List.of("crit", "crit"), now0.history().stream().map(h -> h.envelope().deviceId()).toList());
    assertEquals(List.of(), d.parts().get(1).plan().history());
    assertEquals(1, d.parts().get(1).plan().current().size());
    assertEquals(List.of("norm", "norm"), d.spill().get(0).rows().stream().map(h -> h.envelope().deviceId()).toList());
    assertEquals(7, d.spill().get(0).epoch());
    assertEquals(2, d.spill().get(1).rows().size());
  }

  @Test
  void aLockedHistoryHoldsBackTheCriticalRowsTooAndNothingElse() {
    Plan p0 = plan(0, Map.of("crit", Priority.HIGH, "norm", Priority.NORMAL));
    Spill.Degraded d = Spill.splitAll(List.of(new Part(0, 7, p0)));
    Plan now0 = d.parts().get(0).plan();
    assertEquals(List.of(), now0.history(), "no history row is written now");
    assertEquals(0, d.parts().get(0).size());
    assertEquals(p0.current(), now0.current());
    assertEquals(p0.events(), now0.events());
    assertEquals(p0.next(), now0.next());
    assertEquals(p0.history(), d.spill().get(0).rows(), "every row spilled, in the plan's order, critical ones with their class");
    assertEquals(2, d.spill().get(0).rows().stream().filter(h -> h.retentionClass() == 1).count());
  }

  @Test
  void onlyCommittedSlotsSpillAndNeverTheRefusedDevices() {
    Plan p0 = plan(0, Map.of("a", Priority.NORMAL, "b", Priority.NORMAL));
    Plan p1 = plan(1, Map.of("c", Priority.NORMAL));
    Spill.Degraded d = Spill.split(List.of(new Part(0, 1, p0), new Part(1, 1, p1)));
    Map<Integer, SlotCommit> out = Map.of(0, new SlotCommit(new Committed(1, 0), Map.of("b", new DbErrors.DbError(DbErrors.Kind.POISON, "23514", "x"))),
        1, new SlotCommit(new Fenced("other", 2), Map.of()));
    List<Spill.Batch> pub = Spill.toPublish(d, out, 1_700_000_000_123L);
    assertEquals(1, pub.size());
    assertEquals(1_700_000_000_123L, pub.get(0).committedAtMs());
    assertEquals(List.of("a", "a"), pub.get(0).rows().stream().map(h -> h.envelope().deviceId()).toList());
  }

  @Test
  void aSpilledBatchReadsBackAsTheSameRows() throws Exception {
    Plan p = plan(3, Map.of("n1", Priority.NORMAL));
    List<HistoryRow> rows = p.history();
    Spill.Batch b = new Spill.Batch(3, 42, rows);
    Spill.Batch back = Spill.decode(Spill.encode(b));
    assertEquals(3, back.slot());
    assertEquals(42, back.epoch());
    assertEquals(rows, back.rows());
    assertEquals(0, back.committedAtMs()); // not known: the back-fill writes now()
    Spill.Batch stamped = Spill.decode(Spill.encode(new Spill.Batch(3, 42, rows, 1_700_000_000_123L)));
    assertEquals(1_700_000_000_123L, stamped.committedAtMs());
    assertEquals(rows, stamped.rows());
  }

  @Test
  void aBodyThatIsNoSpillIsInvalid() {
    assertThrows(InvalidMessage.class, () -> Spill.decode("{\"x\":1}".getBytes(StandardCharsets.UTF_8)));
    assertThrows(InvalidMessage.class, () -> Spill.decode("nope".getBytes(StandardCharsets.UTF_8)));
  }
}
