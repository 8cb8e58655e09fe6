package dev.inspection.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.control.SlotState;
import dev.inspection.control.WorkerState;
import dev.inspection.scheduler.ControlStore.SlotRow;
import dev.inspection.scheduler.ControlStore.WorkerRow;
import dev.inspection.scheduler.SlotFigures.Figures;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SlotFiguresTest {
  private static SlotRow slot(int id, String owner) {
    return new SlotRow(id, owner, 3, SlotState.ACTIVE, null, 1000, false);
  }

  private static WorkerRow worker(String id, JsonObject slots) {
    return new WorkerRow(id, WorkerState.ACTIVE, 100, 60_000, new JsonObject().put("slots", slots));
  }

  @Test
  void theOwnersReportIsTaken() {
    Map<Integer, Figures> f = SlotFigures.fold(Map.of(), List.of(slot(1, "w1")),
        List.of(worker("w1", new JsonObject().put("1", new JsonObject().put("rate", 12.5).put("backlog", 40).put("ms", 80.0)))));
    assertEquals(new Figures(12.5, 40, 80.0), f.get(1));
  }

  @Test
  void aSlotJustMovedKeepsItsPreviousOwnersRateAndBatchTimeUntilTheNewOwnerHasMeasuredThem() {
    Map<Integer, Figures> before = Map.of(1, new Figures(12.5, 40, 80.0));
    // the new owner's first heartbeat: no rate, no batch time yet; its backlog is what it is
    Map<Integer, Figures> f = SlotFigures.fold(before, List.of(slot(1, "w2")),
        List.of(worker("w2", new JsonObject().put("1", new JsonObject().put("backlog", 3)))));
    assertEquals(new Figures(12.5, 3, 80.0), f.get(1));
    // measured: its own figures from now on, a zero rate included
    f = SlotFigures.fold(f, List.of(slot(1, "w2")),
        List.of(worker("w2", new JsonObject().put("1", new JsonObject().put("rate", 0.0).put("backlog", 0).put("ms", 20.0)))));
    assertEquals(new Figures(0.0, 0, 20.0), f.get(1));
  }

  @Test
  void aReportAboutASlotTheWorkerDoesNotOwnIsIgnored() {
    Map<Integer, Figures> before = Map.of(1, new Figures(12.5, 40, 80.0));
    // a dead worker's last heartbeat still lists slot 1, which now belongs to w2
    Map<Integer, Figures> f = SlotFigures.fold(before, List.of(slot(1, "w2")),
        List.of(worker("w1", new JsonObject().put("1", new JsonObject().put("rate", 0.0).put("backlog", 0).put("ms", 1.0)))));
    assertEquals(before.get(1), f.get(1));
  }

  @Test
  void unknownFiguresCountAsZeroAndMalformedEntriesAreSkipped() {
    Map<Integer, Figures> f = SlotFigures.fold(Map.of(), List.of(slot(2, "w1")), List.of(worker("w1", new JsonObject()
        .put("x", new JsonObject().put("rate", 5.0)).put("2", "not an object"))));
    assertFalse(f.containsKey(2));
    Figures none = Figures.NONE;
    assertEquals(0, none.rateOrZero());
    assertEquals(0, none.msOrZero());
    assertTrue(Double.isNaN(none.rate()));
    // a worker row without metrics changes nothing
    Map<Integer, Figures> g = SlotFigures.fold(Map.of(2, new Figures(1, 2, 3)), List.of(slot(2, "w1")),
        List.of(new WorkerRow("w1", WorkerState.ACTIVE, 100, 1, null)));
    assertEquals(new Figures(1, 2, 3), g.get(2));
  }
}
