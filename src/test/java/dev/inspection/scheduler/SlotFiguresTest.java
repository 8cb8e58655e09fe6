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

  private static JsonObject quietSlots(int... ids) {
    JsonObject o = new JsonObject();
    for (int id : ids) o.put(Integer.toString(id), new JsonObject().put("backlog", 0).put("quiet", true));
    return o;
  }

  @Test
  void aSlotIsQuietOnlyWhenItsLiveOwnerSaidSoInAFreshHeartbeat() {
    List<SlotRow> slots = List.of(slot(0, "w1"), slot(1, "w1"), slot(2, "w2"), slot(3, null), slot(4, "w1"),
        new SlotRow(5, "w1", 3, SlotState.MOVING, "w2", 100, false), new SlotRow(6, "w1", 3, SlotState.ACTIVE, null, 100, true));
    JsonObject w1 = quietSlots(0, 3, 5, 6).put("1", new JsonObject().put("backlog", 100)) // 1: a full lane, not quiet
        .put("4", new JsonObject().put("backlog", 0).put("quiet", "yes")); // 4: not a boolean true
    // 2 is quiet by w1's word but belongs to w2, which says nothing of it; 3 has no owner; 5 is moving; 6's lease expired
    assertEquals(java.util.Set.of(0), SlotFigures.quiet(slots, List.of(worker("w1", w1), worker("w2", new JsonObject())), 7000));
    assertEquals(java.util.Set.of(0, 2), SlotFigures.quiet(slots, List.of(worker("w1", w1.copy().put("2", new JsonObject().put("quiet", true))),
        worker("w2", quietSlots(2))), 7000));
  }

  @Test
  void aStaleOrDeadOwnersWordDoesNotCount() {
    List<SlotRow> slots = List.of(slot(0, "w1"));
    JsonObject quiet = new JsonObject().put("slots", quietSlots(0));
    assertEquals(java.util.Set.of(0), SlotFigures.quiet(slots, List.of(new WorkerRow("w1", WorkerState.ACTIVE, 7000, 60_000, quiet)), 7000));
    assertTrue(SlotFigures.quiet(slots, List.of(new WorkerRow("w1", WorkerState.ACTIVE, 7001, 60_000, quiet)), 7000).isEmpty(), "heartbeat too old");
    assertTrue(SlotFigures.quiet(slots, List.of(new WorkerRow("w1", WorkerState.DEAD, 100, 60_000, quiet)), 7000).isEmpty(), "a dead owner");
    assertTrue(SlotFigures.quiet(slots, List.of(new WorkerRow("w1", WorkerState.ACTIVE, 100, 60_000, null)), 7000).isEmpty(), "no figures");
    assertTrue(SlotFigures.quiet(slots, List.of(new WorkerRow("w1", WorkerState.ACTIVE, 100, 60_000, new JsonObject().put("slots", "x"))), 7000).isEmpty());
  }
}
