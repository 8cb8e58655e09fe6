package dev.inspection.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.control.SlotState;
import dev.inspection.scheduler.RebalancePlanner.Move;
import dev.inspection.scheduler.RebalancePlanner.Plan;
import dev.inspection.scheduler.RebalancePlanner.Settings;
import dev.inspection.scheduler.RebalancePlanner.SlotInfo;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class RebalancePlannerTest {
  private static final long NOW = 1_000_000_000L;
  private static final Settings DEFAULTS = Settings.defaults();
  private static final Map<Integer, Long> NO_SLOT_HISTORY = Map.of();
  private static final Map<String, Long> NO_SOURCE_HISTORY = Map.of();

  // ---- rebalance ----

  @Test
  void settingsDefaultsAreTheDesignValues() {
    assertEquals(new Settings(0.25, 5, 300_000, 60_000), Settings.defaults());
  }

  @Test
  void balancedFleetPlansNoMovesAndSaysWhy() {
    List<SlotInfo> slots = concat(active("A", 0, 10, 1), active("B", 10, 10, 1), active("C", 20, 9, 1));
    Plan p = plan(List.of("A", "B", "C"), slots);
    assertEquals(List.of(), p.moves());
    assertEquals("balanced: spread 10.3% <= threshold 25%", p.reason());
  }

  @Test
  void heavyAndEmptyWorkerGetFiveMovesAllFromTheHeavyOne() {
    Plan p = plan(List.of("A", "B"), active("A", 0, 10, 1));
    assertEquals(IntStream.range(0, 5).mapToObj(i -> new Move(i, "A", "B")).toList(), p.moves());
    assertEquals("moved 5 (cap 5): spread 200% -> 0% <= threshold 25%", p.reason());
  }

  @Test
  void spreadExactlyAtTheThresholdMovesNothing() {
    // 9 and 7: mean 8, spread 2/8 = 25 %
    List<SlotInfo> slots = concat(active("A", 0, 9, 1), active("B", 9, 7, 1));
    Plan p = plan(List.of("A", "B"), slots);
    assertEquals(List.of(), p.moves());
    assertEquals("balanced: spread 25% <= threshold 25%", p.reason());

    Plan stricter = RebalancePlanner.rebalance(List.of("A", "B"), slots, NO_SLOT_HISTORY, NO_SOURCE_HISTORY, NOW,
        new Settings(0.24, 5, 300_000, 60_000));
    assertEquals(List.of(new Move(0, "A", "B")), stricter.moves());
  }

  @Test
  void moveCapIsRespectedAndReported() {
    List<SlotInfo> slots = active("A", 0, 20, 1);
    Plan p = RebalancePlanner.rebalance(List.of("A", "B", "C"), slots, NO_SLOT_HISTORY, NO_SOURCE_HISTORY, NOW,
        new Settings(0.25, 3, 300_000, 60_000));
    assertEquals(List.of(new Move(0, "A", "B"), new Move(1, "A", "C"), new Move(2, "A", "B")), p.moves());
    assertEquals("moved 3 (cap 3): spread 300% -> 240% > threshold 25%, cap reached", p.reason());

    Plan none = RebalancePlanner.rebalance(List.of("A", "B", "C"), slots, NO_SLOT_HISTORY, NO_SOURCE_HISTORY, NOW,
        new Settings(0.25, 0, 300_000, 60_000));
    assertEquals(List.of(), none.moves());
    assertEquals("move cap 0: spread 300% > threshold 25%", none.reason());
  }

  @Test
  void slotMovedFourMinutesAgoIsSkippedButSixMinutesAgoIsAllowed() {
    List<SlotInfo> slots = active("A", 0, 2, 1);
    Map<Integer, Long> slot0MovedAtT = Map.of(0, NOW);
    List<String> workers = List.of("A", "B");

    Plan fourMinutesLater = RebalancePlanner.rebalance(workers, slots, slot0MovedAtT, NO_SOURCE_HISTORY,
        NOW + 240_000, DEFAULTS);
    assertEquals(List.of(new Move(1, "A", "B")), fourMinutesLater.moves());

    Plan sixMinutesLater = RebalancePlanner.rebalance(workers, slots, slot0MovedAtT, NO_SOURCE_HISTORY,
        NOW + 360_000, DEFAULTS);
    assertEquals(List.of(new Move(0, "A", "B")), sixMinutesLater.moves());

    Plan exactlyFive = RebalancePlanner.rebalance(workers, slots, slot0MovedAtT, NO_SOURCE_HISTORY,
        NOW + 300_000, DEFAULTS);
    assertEquals(List.of(new Move(0, "A", "B")), exactlyFive.moves(), "the cooldown is over once it has elapsed");
  }

  @Test
  void whenEverySlotIsCoolingTheReasonSaysSo() {
    Plan p = RebalancePlanner.rebalance(List.of("A", "B"), active("A", 0, 2, 1), Map.of(0, NOW, 1, NOW),
        NO_SOURCE_HISTORY, NOW + 240_000, DEFAULTS);
    assertEquals(List.of(), p.moves());
    assertEquals("blocked by cooldowns: spread 200% > threshold 25%", p.reason());
  }

  @Test
  void sourceThatGaveASlotAwayThirtySecondsAgoIsSkippedForTheNextHeaviest() {
    List<SlotInfo> slots = concat(active("A", 0, 10, 1), active("B", 10, 8, 1));
    Plan p = RebalancePlanner.rebalance(List.of("A", "B", "C"), slots, NO_SLOT_HISTORY,
        Map.of("A", NOW - 30_000), NOW, DEFAULTS);
    assertEquals(List.of(new Move(10, "B", "C"), new Move(11, "B", "C"), new Move(12, "B", "C"),
        new Move(13, "B", "C")), p.moves());
    assertEquals("moved 4 (cap 5): spread 166.7% -> 100% > threshold 25%, blocked by cooldowns", p.reason());
  }

  @Test
  void sourceWhoseCooldownIsOverMayGiveSeveralSlotsInOnePlan() {
    List<SlotInfo> slots = concat(active("A", 0, 10, 1), active("B", 10, 8, 1));
    Plan p = RebalancePlanner.rebalance(List.of("A", "B", "C"), slots, NO_SLOT_HISTORY,
        Map.of("A", NOW - 90_000), NOW, DEFAULTS);
    assertEquals(List.of(new Move(0, "A", "C"), new Move(1, "A", "C"), new Move(2, "A", "C"),
        new Move(10, "B", "C"), new Move(3, "A", "C")), p.moves());
  }

  @Test
  void weightsNotSlotCountsDecideWhichWorkerIsHeavy() {
    // A: 2 slots of 50 = 100; B: 10 slots of 1 = 10. By count B is the heavy one; by weight it is A.
    List<SlotInfo> slots = concat(active("A", 0, 2, 50), active("B", 10, 10, 1));
    Plan p = plan(List.of("A", "B"), slots);
    assertEquals(List.of(new Move(0, "A", "B")), p.moves());
    assertEquals("moved 1 (cap 5): spread 163.6% -> 18.2% <= threshold 25%", p.reason());
  }

  @Test
  void heavySlotIsNotMovedWhenThatWouldOnlyShiftTheImbalance() {
    // moving the 100 to B would leave B at 120 and A at 0: worse than now
    List<SlotInfo> slots = concat(active("A", 0, 1, 100), active("B", 1, 20, 1));
    Plan p = plan(List.of("A", "B"), slots);
    assertEquals(List.of(), p.moves());
    assertEquals("nothing movable: spread 133.3% > threshold 25%", p.reason());
  }

  @Test
  void heavySlotStaysAndTheNextWorkerFeedsTheEmptyOneWithoutOvershooting() {
    List<String> workers = List.of("A", "B", "C");
    List<SlotInfo> slots = concat(active("A", 0, 1, 100), active("B", 1, 50, 1));
    Plan p = plan(workers, slots);
    assertEquals(IntStream.rangeClosed(1, 5).mapToObj(i -> new Move(i, "B", "C")).toList(), p.moves());
    double before = spread(loads(workers, slots));
    double after = spread(loads(workers, applied(slots, p.moves())));
    assertTrue(after < before, before + " -> " + after);
  }

  @Test
  void aHeavySlotGoesWhenItNarrowsTheGapMoreThanALightOne() {
    // A = 100 + 10 x 1, B = 0: moving the 100 leaves 10 vs 100 (gap 90); a 1 would leave 109 vs 1 (gap 108)
    List<SlotInfo> slots = concat(active("A", 0, 1, 100), active("A", 1, 10, 1));
    Plan p = plan(List.of("A", "B"), slots);
    assertEquals(List.of(new Move(0, "A", "B")), p.moves());
    assertTrue(p.reason().endsWith("nothing movable"), p.reason());
  }

  @Test
  void movingSlotsCountForNobody() {
    // A: 6 active + 4 moving; B: 6 active. Counting the moving ones for A would make it 10 vs 6 (50 %).
    List<SlotInfo> slots = concat(active("A", 0, 6, 1), slots("A", 6, 4, 1, SlotState.MOVING), active("B", 10, 6, 1));
    Plan p = plan(List.of("A", "B"), slots);
    assertEquals(List.of(), p.moves());
    assertEquals("balanced: spread 0% <= threshold 25%", p.reason());
  }

  @Test
  void movingSlotsAreNeverPickedAgain() {
    List<SlotInfo> slots = concat(slots("A", 0, 4, 1, SlotState.MOVING), active("A", 4, 4, 1));
    Plan p = plan(List.of("A", "B"), slots);
    assertEquals(List.of(new Move(4, "A", "B"), new Move(5, "A", "B")), p.moves());
  }

  @Test
  void drainingAndLoadingSlotsCountForTheirOwnerButDoNotMove() {
    List<SlotInfo> half = concat(active("A", 0, 5, 1), slots("A", 5, 5, 1, SlotState.DRAINING_OLD));
    assertEquals(IntStream.range(0, 5).mapToObj(i -> new Move(i, "A", "B")).toList(),
        plan(List.of("A", "B"), half).moves());

    Plan loading = plan(List.of("A", "B"), slots("A", 0, 10, 1, SlotState.LOADING_NEW));
    assertEquals(List.of(), loading.moves());
    assertEquals("nothing movable: spread 200% > threshold 25%", loading.reason());
  }

  @Test
  void orphanedAndFreeSlotsCountForNobody() {
    List<SlotInfo> slots = concat(active("A", 0, 2, 1), slots("A", 2, 10, 1, SlotState.ORPHANED),
        slots("B", 12, 10, 1, SlotState.FREE), active("B", 22, 2, 1));
    assertEquals("balanced: spread 0% <= threshold 25%", plan(List.of("A", "B"), slots).reason());
  }

  @Test
  void slotsOfWorkersThatAreNotActiveAreIgnored() {
    // X (say, dead) holds 30; counted in the total the spread would read 8/19 = 42 %, not 200 %
    List<SlotInfo> slots = concat(active("A", 0, 8, 1), active("X", 100, 30, 1));
    Plan p = plan(List.of("A", "B"), slots);
    assertEquals(IntStream.range(0, 4).mapToObj(i -> new Move(i, "A", "B")).toList(), p.moves());
    assertEquals("moved 4 (cap 5): spread 200% -> 0% <= threshold 25%", p.reason());
  }

  @Test
  void noActiveWorkerMeansNoMoves() {
    Plan p = plan(List.of(), active("A", 0, 8, 1));
    assertEquals(List.of(), p.moves());
    assertEquals("no active worker", p.reason());
  }

  @Test
  void theSameFleetInAnyInputOrderGivesTheSamePlan() {
    Random r = new Random(7);
    List<String> workers = new ArrayList<>(List.of("w1", "w2", "w3", "w4"));
    List<SlotInfo> slots = randomSlots(r, workers, 80);
    Plan first = plan(workers, slots);
    assertFalse(first.moves().isEmpty(), "the fixture should need moves: " + first.reason());
    for (int i = 0; i < 20; i++) {
      Collections.shuffle(workers, r);
      List<SlotInfo> shuffled = new ArrayList<>(slots);
      Collections.shuffle(shuffled, r);
      assertEquals(first, plan(workers, shuffled));
    }
  }

  @Test
  void randomFleetsNeverEndWithMoreSpreadAndEveryMoveNarrowsItsPair() {
    int planned = 0;
    for (int seed = 0; seed < 500; seed++) {
      Random r = new Random(seed);
      List<String> workers = IntStream.range(0, 1 + r.nextInt(6)).mapToObj(i -> "w" + i).toList();
      List<SlotInfo> slots = randomSlots(r, workers, r.nextInt(80));
      Map<Integer, Long> slotHistory = new HashMap<>();
      for (SlotInfo si : slots) if (r.nextInt(5) == 0) slotHistory.put(si.slot(), NOW - r.nextInt(600_000));
      Map<String, Long> sourceHistory = new HashMap<>();
      for (String w : workers) if (r.nextInt(4) == 0) sourceHistory.put(w, NOW - r.nextInt(120_000));
      Settings s = new Settings(0.25, r.nextInt(8), 300_000, 60_000);
      Plan p = RebalancePlanner.rebalance(workers, slots, slotHistory, sourceHistory, NOW, s);
      String ctx = "seed " + seed + ": " + p.reason();

      Map<String, Double> loads = loads(workers, slots);
      double before = spread(loads);
      assertTrue(p.moves().size() <= s.maxMoves(), ctx);
      if (before <= s.threshold()) assertEquals(List.of(), p.moves(), ctx);
      Map<Integer, SlotInfo> byId = slots.stream().collect(Collectors.toMap(SlotInfo::slot, si -> si));
      Set<Integer> seen = new HashSet<>();
      for (Move m : p.moves()) {
        SlotInfo si = byId.get(m.slot());
        assertEquals(SlotState.ACTIVE, si.state(), ctx);
        assertEquals(si.owner(), m.from(), ctx);
        assertTrue(workers.contains(m.to()) && !m.to().equals(m.from()), ctx);
        assertTrue(seen.add(m.slot()), "slot planned twice, " + ctx);
        Long slotMoved = slotHistory.get(m.slot());
        assertTrue(slotMoved == null || NOW - slotMoved >= s.slotCooldownMs(), ctx);
        Long sourceMoved = sourceHistory.get(m.from());
        assertTrue(sourceMoved == null || NOW - sourceMoved >= s.sourceCooldownMs(), ctx);
        double lightest = Collections.min(loads.values());
        assertEquals(lightest, loads.get(m.to()), ctx);
        double gap = loads.get(m.from()) - loads.get(m.to());
        loads.merge(m.from(), -si.weight(), Double::sum);
        loads.merge(m.to(), si.weight(), Double::sum);
        assertTrue(Math.abs(loads.get(m.from()) - loads.get(m.to())) < gap, ctx);
      }
      assertTrue(spread(loads) <= before, ctx);
      planned += p.moves().size();
    }
    assertTrue(planned > 100, "the random fleets should exercise the planner, planned " + planned);
  }

  // ---- assign ----

  @Test
  void assignSpreadsUnownedSlotsEvenlyAndInTurn() {
    List<Move> moves = RebalancePlanner.assign(List.of("C", "A", "B"), List.of(), range(0, 9));
    List<String> to = List.of("A", "B", "C", "A", "B", "C", "A", "B", "C");
    assertEquals(IntStream.range(0, 9).mapToObj(i -> new Move(i, null, to.get(i))).toList(), moves);
  }

  @Test
  void assignFillsTheLightWorkerFirst() {
    List<Move> moves = RebalancePlanner.assign(List.of("A", "B"), active("A", 0, 3, 1), List.of(10, 11, 12, 13));
    assertEquals(List.of(new Move(10, null, "B"), new Move(11, null, "B"), new Move(12, null, "B"),
        new Move(13, null, "A")), moves);
  }

  @Test
  void assignPlacesTheHeaviestUnownedSlotFirst() {
    List<SlotInfo> free = List.of(free(0, 1), free(1, 10), free(2, 5));
    List<Move> moves = RebalancePlanner.assign(List.of("A", "B"), free, List.of(0, 1, 2));
    assertEquals(List.of(new Move(1, null, "A"), new Move(2, null, "B"), new Move(0, null, "B")), moves);
  }

  @Test
  void assignKeepsTheGivenOrderAmongEqualWeights() {
    List<Move> moves = RebalancePlanner.assign(List.of("A", "B"), List.of(), List.of(5, 2, 9));
    assertEquals(List.of(new Move(5, null, "A"), new Move(2, null, "B"), new Move(9, null, "A")), moves);
  }

  @Test
  void assignDoesNotCountAStaleOwnerOfASlotItGivesOut() {
    List<Move> moves = RebalancePlanner.assign(List.of("A", "B"), active("A", 0, 1, 5), List.of(0));
    assertEquals(List.of(new Move(0, null, "A")), moves);
  }

  @Test
  void assignWithoutActiveWorkersGivesNothing() {
    assertEquals(List.of(), RebalancePlanner.assign(List.of(), List.of(), range(0, 4)));
    assertEquals(List.of(), RebalancePlanner.assign(List.of("A"), List.of(), List.of()));
  }

  // ---- drain ----

  @Test
  void drainMovesTheBatchMinusWhatIsAlreadyMoving() {
    List<SlotInfo> slots = concat(active("D", 0, 10, 1), slots("D", 10, 2, 1, SlotState.MOVING));
    List<Move> moves = RebalancePlanner.drain("D", List.of("T1", "T2"), slots, 5);
    assertEquals(List.of(new Move(0, "D", "T1"), new Move(1, "D", "T2"), new Move(2, "D", "T1")), moves);
  }

  @Test
  void drainNeverPlansANegativeBatch() {
    List<SlotInfo> slots = concat(active("D", 0, 4, 1), slots("D", 4, 6, 1, SlotState.MOVING));
    assertEquals(List.of(), RebalancePlanner.drain("D", List.of("T1"), slots, 5));
  }

  @Test
  void drainSendsHeaviestFirstToTheLeastLoadedTarget() {
    List<SlotInfo> slots = concat(List.of(
        new SlotInfo(0, "D", SlotState.ACTIVE, 1), new SlotInfo(1, "D", SlotState.ACTIVE, 8),
        new SlotInfo(2, "D", SlotState.ACTIVE, 3), new SlotInfo(3, "D", SlotState.ACTIVE, 5)),
        active("T2", 10, 4, 1));
    List<Move> moves = RebalancePlanner.drain("D", List.of("T1", "T2"), slots, 4);
    assertEquals(List.of(new Move(1, "D", "T1"), new Move(3, "D", "T2"), new Move(2, "D", "T1"),
        new Move(0, "D", "T2")), moves);
  }

  @Test
  void drainSpreadsEvenlyOverTargets() {
    List<Move> moves = RebalancePlanner.drain("D", List.of("C", "A", "B"), active("D", 0, 6, 1), 10);
    assertEquals(6, moves.size());
    Map<String, Long> perTarget = moves.stream().collect(Collectors.groupingBy(Move::to, Collectors.counting()));
    assertEquals(Map.of("A", 2L, "B", 2L, "C", 2L), perTarget);
    assertEquals(List.of("A", "B", "C"), moves.subList(0, 3).stream().map(Move::to).toList());
  }

  @Test
  void drainOnlyHandsOverActiveSlots() {
    List<SlotInfo> slots = concat(active("D", 0, 2, 1), slots("D", 2, 1, 1, SlotState.DRAINING_OLD),
        slots("D", 3, 1, 1, SlotState.LOADING_NEW), slots("D", 4, 1, 1, SlotState.ORPHANED));
    List<Move> moves = RebalancePlanner.drain("D", List.of("T"), slots, 10);
    assertEquals(List.of(new Move(0, "D", "T"), new Move(1, "D", "T")), moves);
  }

  @Test
  void drainWithoutAnotherTargetGivesNothing() {
    assertEquals(List.of(), RebalancePlanner.drain("D", List.of(), active("D", 0, 3, 1), 5));
    assertEquals(List.of(), RebalancePlanner.drain("D", List.of("D"), active("D", 0, 3, 1), 5));
  }

  // ---- handover ----

  @Test
  void releasedSlotGoesToItsTargetWhileTheTargetIsActive() {
    List<SlotInfo> slots = concat(slots("A", 0, 1, 1, SlotState.DRAINING_OLD), active("B", 1, 5, 1), active("C", 6, 1, 1));
    assertEquals(List.of(new Move(0, "A", "B")),
        RebalancePlanner.handover(List.of("B", "C"), slots, List.of(new RebalancePlanner.Release(0, "A", "B", true))));
  }

  @Test
  void releasedSlotWhoseTargetLeftGoesToTheLightestOtherWorkerAndLoadsCountEachHandover() {
    List<SlotInfo> slots = concat(slots("A", 0, 2, 1, SlotState.DRAINING_OLD), active("B", 2, 3, 1), active("C", 5, 2, 1));
    List<Move> moves = RebalancePlanner.handover(List.of("A", "B", "C"), slots, List.of(
        new RebalancePlanner.Release(0, "A", "gone", true), new RebalancePlanner.Release(1, "A", null, true)));
    // C (2) takes the first; then B and C both carry 3 and the tie goes to the smaller id
    assertEquals(List.of(new Move(0, "A", "C"), new Move(1, "A", "B")), moves);
  }

  @Test
  void aReleasedSlotGoesBackToItsOwnerOnlyWhenNobodyElseCanTakeItAndNeverToAFencedOne() {
    List<SlotInfo> slots = slots("A", 0, 1, 1, SlotState.DRAINING_OLD);
    assertEquals(List.of(new Move(0, "A", "A")),
        RebalancePlanner.handover(List.of("A"), slots, List.of(new RebalancePlanner.Release(0, "A", null, true))));
    assertEquals(List.of(), RebalancePlanner.handover(List.of("A"), slots(("A"), 0, 1, 1, SlotState.MOVING),
        List.of(new RebalancePlanner.Release(0, "A", null, false))), "an owner being fenced never gets the slot back");
    assertEquals(List.of(), RebalancePlanner.handover(List.of(), slots, List.of(new RebalancePlanner.Release(0, "A", null, true))));
  }

  // ---- helpers ----

  private static Plan plan(List<String> workers, List<SlotInfo> slots) {
    Plan p = RebalancePlanner.rebalance(workers, slots, NO_SLOT_HISTORY, NO_SOURCE_HISTORY, NOW, DEFAULTS);
    assertNotNull(p.reason());
    assertNotEquals("", p.reason());
    return p;
  }

  private static List<SlotInfo> active(String owner, int first, int count, double weight) {
    return slots(owner, first, count, weight, SlotState.ACTIVE);
  }

  private static List<SlotInfo> slots(String owner, int first, int count, double weight, SlotState state) {
    return IntStream.range(first, first + count).mapToObj(i -> new SlotInfo(i, owner, state, weight)).toList();
  }

  private static SlotInfo free(int slot, double weight) {
    return new SlotInfo(slot, null, SlotState.FREE, weight);
  }

  @SafeVarargs
  private static List<SlotInfo> concat(List<SlotInfo>... parts) {
    List<SlotInfo> out = new ArrayList<>();
    for (List<SlotInfo> p : parts) out.addAll(p);
    return out;
  }

  private static List<Integer> range(int from, int to) {
    return IntStream.range(from, to).boxed().toList();
  }

  /** Slots with integer weights (so the oracle's sums are exact), owned by the workers, by "gone" or nobody. */
  private static List<SlotInfo> randomSlots(Random r, List<String> workers, int count) {
    List<String> owners = new ArrayList<>(workers);
    owners.add("gone");
    SlotState[] states = SlotState.values();
    List<SlotInfo> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String owner = r.nextInt(10) == 0 ? null : owners.get(r.nextInt(owners.size()));
      SlotState state = r.nextInt(2) == 0 ? SlotState.ACTIVE : states[r.nextInt(states.length)];
      double weight = r.nextInt(5) == 0 ? 1 + r.nextInt(100) : 1 + r.nextInt(3);
      out.add(new SlotInfo(i, owner, state, weight));
    }
    return out;
  }

  /** The load definition, written independently of the planner: owned states except MOVING, active owners. */
  private static Map<String, Double> loads(List<String> workers, List<SlotInfo> slots) {
    Map<String, Double> out = new LinkedHashMap<>();
    for (String w : workers) out.put(w, 0.0);
    for (SlotInfo si : slots) {
      if (!out.containsKey(si.owner())) continue;
      SlotState st = si.state();
      if (st == SlotState.ACTIVE || st == SlotState.DRAINING_OLD || st == SlotState.LOADING_NEW) {
        out.merge(si.owner(), si.weight(), Double::sum);
      }
    }
    return out;
  }

  private static double spread(Map<String, Double> loads) {
    double max = Collections.max(loads.values());
    double min = Collections.min(loads.values());
    double mean = loads.values().stream().mapToDouble(Double::doubleValue).sum() / loads.size();
    return max == min ? 0 : (max - min) / mean;
  }

  private static List<SlotInfo> applied(List<SlotInfo> slots, List<Move> moves) {
    Map<Integer, String> to = moves.stream().collect(Collectors.toMap(Move::slot, Move::to));
    return slots.stream()
        .map(si -> to.containsKey(si.slot()) ? new SlotInfo(si.slot(), to.get(si.slot()), si.state(), si.weight()) : si)
        .toList();
  }
}
