package dev.inspection.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.control.SlotState;
import dev.inspection.scheduler.ControlStore.SlotRow;
import dev.inspection.scheduler.RebalancePlanner.Move;
import dev.inspection.scheduler.RebalancePlanner.SlotInfo;
import dev.inspection.scheduler.ScaleOutPlanner.Settings;
import dev.inspection.scheduler.ScaleOutPlanner.Signals;
import dev.inspection.scheduler.ScaleOutPlanner.Wave;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Wave sizing, the books of waves in flight and the scale-out moves, without a database or a clock. */
class ScaleOutPlannerTest {
  private static final Settings S = Settings.defaults();
  private static final long NOW = 1_000_000_000L;
  private static final Signals HEALTHY = new Signals(40, 100, 16);

  private static Wave done(int size, long durationMs) {
    return new Wave("w", Set.of(1), size, NOW - durationMs, NOW);
  }

  // ---- wave sizing ----

  @Test
  void defaultsAreSixteenUpToSixtyFourFastWithinFifteenSecondsSlowOverThirty() {
    assertEquals(new Settings(16, 2, 64, 15_000, 30_000, 1_000, 200, 300_000), Settings.defaults());
  }

  @Test
  void aWorkerWithoutAWaveYetGetsTheFirstWave() {
    assertEquals(16, ScaleOutPlanner.nextSize(null, HEALTHY, S));
  }

  @Test
  void aWaveThatArrivedQuicklyDoublesTheNextUpToTheMaximum() {
    assertEquals(16, ScaleOutPlanner.nextSize(done(8, 1_200), HEALTHY, S));
    assertEquals(64, ScaleOutPlanner.nextSize(done(32, 5_000), HEALTHY, S));
    assertEquals(64, ScaleOutPlanner.nextSize(done(64, 900), HEALTHY, S));
  }

  @Test
  void aSlowWaveHalvesTheNextDownToTheMinimum() {
    assertEquals(16, ScaleOutPlanner.nextSize(done(32, 30_001), HEALTHY, S));
    assertEquals(2, ScaleOutPlanner.nextSize(done(2, 40_000), HEALTHY, S));
  }

  @Test
  void aWaveBetweenFastAndSlowKeepsItsSize() {
    assertEquals(16, ScaleOutPlanner.nextSize(done(16, 20_000), HEALTHY, S));
  }

  @Test
  void slowCommitsStopTheWaveFromGrowingEvenAfterAFastWave() {
    assertEquals(16, ScaleOutPlanner.nextSize(done(16, 800), new Signals(1_500, 0, 16), S));
  }

  @Test
  void aWorkerThatHasNotCommittedYetGetsNoBiggerWave() {
    assertEquals(16, ScaleOutPlanner.nextSize(done(16, 800), new Signals(-1, 0, 16), S));
    assertEquals(16, ScaleOutPlanner.nextSize(done(16, 800), Signals.NONE, S));
  }

  @Test
  void aBacklogAboveTheLimitPerSlotStopsTheWaveFromGrowing() {
    assertEquals(16, ScaleOutPlanner.nextSize(done(16, 800), new Signals(40, 16 * 201, 16), S));
    assertEquals(32, ScaleOutPlanner.nextSize(done(16, 800), new Signals(40, 16 * 200, 16), S));
  }

  @Test
  void signalsAreReadFromTheHeartbeatAndMissingOnesCountAsUnknown() {
    JsonObject hb = new JsonObject().put("commit_p99_ms", 12).put("mailbox", 300).put("slots_held", 3);
    assertEquals(new Signals(12, 300, 3), Signals.of(hb));
    assertEquals(Signals.NONE, Signals.of(new JsonObject()));
    assertEquals(Signals.NONE, Signals.of(null));
    assertEquals(Signals.NONE, Signals.of(new JsonObject().put("mailbox", "lots")));
  }

  @Test
  void settingsThatCannotWorkAreRefused() {
    assertThrowsIae(() -> new Settings(8, 0, 64, 5_000, 15_000, 1_000, 200, 1));
    assertThrowsIae(() -> new Settings(100, 2, 64, 5_000, 15_000, 1_000, 200, 1));
    assertThrowsIae(() -> new Settings(8, 2, 64, 20_000, 15_000, 1_000, 200, 1));
  }

  private static void assertThrowsIae(Runnable r) {
    org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, r::run);
  }

  // ---- books ----

  @Test
  void aWaveIsInFlightUntilEverySlotIsActiveOnItsTarget() {
    Map<String, Wave> books = Map.of("b", new Wave("b", Set.of(1, 2, 3), 8, NOW - 2_000, -1));
    List<SlotRow> rows = List.of(new SlotRow(1, "b", 2, SlotState.ACTIVE, null, 10, false), new SlotRow(2, "b", 2, SlotState.LOADING_NEW, null, 10, false),
        new SlotRow(3, "a", 1, SlotState.MOVING, "b", 10, false));
    assertTrue(ScaleOutPlanner.settle(books, rows, NOW).get("b").inFlight());
    rows = List.of(new SlotRow(1, "b", 2, SlotState.ACTIVE, null, 10, false), new SlotRow(2, "b", 2, SlotState.ACTIVE, null, 10, false),
        new SlotRow(3, "a", 1, SlotState.DRAINING_OLD, "b", 10, false));
    assertTrue(ScaleOutPlanner.settle(books, rows, NOW).get("b").inFlight(), "released by its old owner, not yet handed over");
    rows = List.of(new SlotRow(1, "b", 2, SlotState.ACTIVE, null, 10, false), new SlotRow(2, "b", 2, SlotState.ACTIVE, null, 10, false),
        new SlotRow(3, "b", 2, SlotState.ACTIVE, null, 10, false));
    Wave w = ScaleOutPlanner.settle(books, rows, NOW).get("b");
    assertFalse(w.inFlight());
    assertEquals(2_000, w.durationMs());
  }

  @Test
  void aSlotThatWentElsewhereNoLongerHoldsTheWave() {
    Map<String, Wave> books = Map.of("b", new Wave("b", Set.of(1, 2), 8, NOW - 500, -1));
    List<SlotRow> rows = List.of(new SlotRow(1, "b", 2, SlotState.ACTIVE, null, 10, false), new SlotRow(2, null, 3, SlotState.ORPHANED, null, 10, false));
    assertFalse(ScaleOutPlanner.settle(books, rows, NOW).get("b").inFlight());
  }

  @Test
  void aWorkerWithAWaveInFlightHasNoRoom() {
    Map<String, Wave> books = Map.of("b", new Wave("b", Set.of(1), 8, NOW, -1), "c", done(8, 1_000));
    assertEquals(Map.of("a", 16, "b", 0, "c", 16), ScaleOutPlanner.room(List.of("a", "b", "c"), books, Map.of("c", HEALTHY), Map.of("c", 16), S));
  }

  @Test
  void afterAWaveArrivedTheNextWaitsForAHeartbeatThatCoversIt() {
    Map<String, Wave> books = Map.of("c", done(16, 1_000));
    assertEquals(Map.of("c", 0), ScaleOutPlanner.room(List.of("c"), books, Map.of("c", new Signals(40, 0, 8)), Map.of("c", 24), S),
        "the heartbeat still shows 8 slots of 24");
    assertEquals(Map.of("c", 32), ScaleOutPlanner.room(List.of("c"), books, Map.of("c", new Signals(40, 0, 24)), Map.of("c", 24), S));
    assertEquals(Map.of("c", 16), ScaleOutPlanner.room(List.of("c"), books, Map.of("c", new Signals(40, 24 * 300, 24)), Map.of("c", 24), S),
        "a backlog of 300 per slot: no bigger wave");
  }

  // ---- cold start ----

  @Test
  void freeSlotsGoOutNoMoreThanEachWorkersRoomLeastLoadedFirst() {
    List<Integer> free = IntStream.range(0, 256).boxed().toList();
    List<Move> moves = ScaleOutPlanner.assignFree(List.of("a"), List.of(), free, Map.of("a", 8));
    assertEquals(8, moves.size());
    assertTrue(moves.stream().allMatch(m -> m.to().equals("a") && m.from() == null));
    moves = ScaleOutPlanner.assignFree(List.of("a", "b"), List.of(), free, Map.of("a", 2, "b", 5));
    assertEquals(Map.of("a", 2L, "b", 5L), countByTarget(moves));
    assertTrue(ScaleOutPlanner.assignFree(List.of("a"), List.of(), free, Map.of("a", 0)).isEmpty());
  }

  // ---- scale-out ----

  @Test
  void aJoiningWorkerGetsAWaveFromTheHeavyWorkerRegardlessOfTheSourceCooldown() {
    List<SlotInfo> slots = active("a", 0, 256, 1);
    List<Move> moves = ScaleOutPlanner.scaleOut(List.of("a", "b"), Set.of("b"), slots, Map.of(), NOW, 300_000, Map.of("b", 8));
    assertEquals(IntStream.range(0, 8).mapToObj(i -> new Move(i, "a", "b")).toList(), moves);
  }

  @Test
  void aJoiningWorkerStopsAtItsShare() {
    List<SlotInfo> slots = new ArrayList<>(active("a", 0, 129, 1));
    slots.addAll(active("b", 129, 127, 1));
    assertEquals(List.of(new Move(0, "a", "b")), ScaleOutPlanner.scaleOut(List.of("a", "b"), Set.of("b"), slots, Map.of(), NOW, 300_000, Map.of("b", 64)));
    slots = new ArrayList<>(active("a", 0, 128, 1));
    slots.addAll(active("b", 128, 128, 1));
    assertTrue(ScaleOutPlanner.scaleOut(List.of("a", "b"), Set.of("b"), slots, Map.of(), NOW, 300_000, Map.of("b", 64)).isEmpty());
  }

  @Test
  void slotsInTheirCooldownStayWhereTheyAre() {
    List<SlotInfo> slots = active("a", 0, 4, 1);
    Map<Integer, Long> moved = Map.of(0, NOW - 299_999L, 1, NOW - 300_000L);
    List<Move> moves = ScaleOutPlanner.scaleOut(List.of("a", "b"), Set.of("b"), slots, moved, NOW, 300_000, Map.of("b", 8));
    assertEquals(List.of(new Move(1, "a", "b"), new Move(2, "a", "b")), moves);
  }

  @Test
  void aWorkerPastItsJoinWindowOrAboveTheMeanGetsNoScaleOut() {
    assertEquals(Set.of("new"), ScaleOutPlanner.joining(Map.of("new", 299_999L, "old", 300_000L), S));
    assertEquals(Set.of("b", "c"), ScaleOutPlanner.joining(Map.of("a", 120_000L, "b", 60_000L, "c", 0L), S), "the fleet's first worker joined nothing");
    List<SlotInfo> slots = new ArrayList<>(active("a", 0, 10, 1));
    slots.addAll(active("b", 10, 2, 1));
    assertTrue(ScaleOutPlanner.scaleOut(List.of("a", "b"), Set.of("a"), slots, Map.of(), NOW, 300_000, Map.of("a", 8)).isEmpty());
  }

  @Test
  void aThirdWorkerTakesItsShareFromTheOnlyWorkerWhoseSlotsAreNotCooling() {
    List<SlotInfo> slots = new ArrayList<>(active("a", 0, 128, 1));
    slots.addAll(active("b", 128, 128, 1));
    Map<Integer, Long> moved = new HashMap<>();
    for (int i = 128; i < 256; i++) moved.put(i, NOW - 60_000);
    List<Move> moves = ScaleOutPlanner.scaleOut(List.of("a", "b", "c"), Set.of("b", "c"), slots, moved, NOW, 300_000, Map.of("c", 200));
    assertEquals(85, moves.size(), "c ends at 85, within one slot of 85.3");
    assertTrue(moves.stream().allMatch(m -> m.from().equals("a") && m.to().equals("c")));
  }

  @Test
  void randomFleetsWithJoiningWorkersMoveOnlyTowardsTheShareAndNeverACoolingSlot() {
    int planned = 0;
    for (int seed = 0; seed < 500; seed++) {
      Random r = new Random(seed);
      List<String> workers = IntStream.range(0, 2 + r.nextInt(5)).mapToObj(i -> "w" + i).toList();
      List<SlotInfo> slots = new ArrayList<>();
      for (int i = 0; i < r.nextInt(300); i++) {
        String owner = workers.get(r.nextInt(workers.size()));
        slots.add(new SlotInfo(i, owner, r.nextInt(8) == 0 ? SlotState.LOADING_NEW : SlotState.ACTIVE, 1 + r.nextInt(30)));
      }
      Set<String> joining = new HashSet<>();
      Map<String, Integer> room = new TreeMap<>();
      for (String w : workers) {
        if (r.nextBoolean()) joining.add(w);
        room.put(w, r.nextInt(70));
      }
      Map<Integer, Long> moved = new HashMap<>();
      for (SlotInfo si : slots) if (r.nextInt(4) == 0) moved.put(si.slot(), NOW - r.nextInt(600_000));
      List<Move> moves = ScaleOutPlanner.scaleOut(workers, joining, slots, moved, NOW, 300_000, room);
      String ctx = "seed " + seed;

      Map<Integer, SlotInfo> byId = new HashMap<>();
      for (SlotInfo si : slots) byId.put(si.slot(), si);
      Map<String, Double> loads = new TreeMap<>();
      for (String w : workers) loads.put(w, 0.0);
      for (SlotInfo si : slots) loads.merge(si.owner(), si.weight(), Double::sum);
      double mean = loads.values().stream().mapToDouble(Double::doubleValue).sum() / workers.size();
      Set<Integer> seen = new HashSet<>();
      Map<String, Long> perTarget = countByTarget(moves);
      for (Move m : moves) {
        SlotInfo si = byId.get(m.slot());
        assertEquals(SlotState.ACTIVE, si.state(), ctx);
        assertEquals(si.owner(), m.from(), ctx);
        assertTrue(seen.add(m.slot()), "slot planned twice, " + ctx);
        Long last = moved.get(m.slot());
        assertTrue(last == null || NOW - last >= 300_000, "a cooling slot moved, " + ctx);
        assertTrue(joining.contains(m.to()), ctx);
        assertFalse(joining.contains(m.from()) && loads.get(m.from()) < mean, "took from a joining worker below the mean, " + ctx);
        double before = Math.abs(loads.get(m.to()) - mean);
        assertTrue(loads.get(m.to()) < mean, "the target is below the mean, " + ctx);
        loads.merge(m.from(), -si.weight(), Double::sum);
        loads.merge(m.to(), si.weight(), Double::sum);
        assertTrue(Math.abs(loads.get(m.to()) - mean) < before, "the target ends closer to its share, " + ctx);
      }
      for (Map.Entry<String, Long> e : perTarget.entrySet()) assertTrue(e.getValue() <= room.get(e.getKey()), "wave size kept, " + ctx);
      planned += moves.size();
    }
    assertTrue(planned > 500, "the random fleets should exercise the planner, planned " + planned);
  }

  private static Map<String, Long> countByTarget(List<Move> moves) {
    Map<String, Long> out = new TreeMap<>();
    for (Move m : moves) out.merge(m.to(), 1L, Long::sum);
    return out;
  }

  private static List<SlotInfo> active(String owner, int first, int count, double weight) {
    List<SlotInfo> out = new ArrayList<>();
    for (int i = first; i < first + count; i++) out.add(new SlotInfo(i, owner, SlotState.ACTIVE, weight));
    return out;
  }
}
