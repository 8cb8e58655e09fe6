package dev.inspection.worker;

import static dev.inspection.control.SlotState.ACTIVE;
import static dev.inspection.control.SlotState.DRAINING_OLD;
import static dev.inspection.control.SlotState.LOADING_NEW;
import static dev.inspection.control.SlotState.MOVING;
import static dev.inspection.worker.LeaseReconciler.Phase.CONSUMING;
import static dev.inspection.worker.LeaseReconciler.Phase.LOADING;
import static dev.inspection.worker.LeaseReconciler.Phase.RELEASING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.inspection.control.SlotState;
import dev.inspection.control.WorkerState;
import dev.inspection.worker.LeaseReconciler.Action;
import dev.inspection.worker.LeaseReconciler.Drop;
import dev.inspection.worker.LeaseReconciler.HandBack;
import dev.inspection.worker.LeaseReconciler.Holding;
import dev.inspection.worker.LeaseReconciler.Lease;
import dev.inspection.worker.LeaseReconciler.Load;
import dev.inspection.worker.LeaseReconciler.Local;
import dev.inspection.worker.LeaseReconciler.Phase;
import dev.inspection.worker.LeaseReconciler.Read;
import dev.inspection.worker.LeaseReconciler.Release;
import dev.inspection.worker.LeaseReconciler.Result;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The worker's half of the lease protocol (README "Control plane"), one transition per test. */
class LeaseReconcilerTest {
  private static final long READ = 10;

  /** An ACTIVE, not stopping worker with the given holdings and no local change newer than the read. */
  private static final class Worker {
    final Map<Integer, Holding> holdings = new HashMap<>();
    final Map<Integer, Long> touched = new HashMap<>();
    WorkerState state = WorkerState.ACTIVE;
    boolean stopping;

    Worker holds(int slot, long epoch, Phase phase) {
      holdings.put(slot, new Holding(epoch, phase));
      return this;
    }

    Worker touchedAt(int slot, long seq) {
      touched.put(slot, seq);
      return this;
    }

    Worker in(WorkerState s) {
      state = s;
      return this;
    }

    Worker stopping() {
      stopping = true;
      return this;
    }

    Result reads(Lease... rows) {
      return LeaseReconciler.reconcile(new Read(List.of(rows), READ), new Local(Map.copyOf(holdings), Map.copyOf(touched), state, stopping));
    }
  }

  private static Lease row(int slot, long epoch, SlotState state) {
    return new Lease(slot, epoch, state);
  }

  /** The actions, in order, and the holdings after them. */
  private static void assertOutcome(Result r, List<Action> actions, Map<Integer, Holding> holdings) {
    assertOutcome(r, actions, holdings, "");
  }

  private static void assertOutcome(Result r, List<Action> actions, Map<Integer, Holding> holdings, String why) {
    assertEquals(actions, r.actions(), why);
    assertEquals(holdings, r.holdings(), why);
  }

  @Test
  void loadingNewLeaseIsLoaded() {
    Result r = new Worker().reads(row(3, 7, LOADING_NEW));
    assertOutcome(r, List.of(new Load(3, 7)), Map.of(3, new Holding(7, LOADING)));
  }

  @Test
  void slotStillLoadingIsNotLoadedTwice() {
    Result r = new Worker().holds(3, 7, LOADING).reads(row(3, 7, LOADING_NEW));
    assertOutcome(r, List.of(), Map.of(3, new Holding(7, LOADING)));
  }

  @Test
  void activeLeaseNotHeldIsLoadedAgainBeforeItIsConsumed() {
    // dropped here after failed lease reads while the leader left it: its derived state must be loaded again (INV-10)
    Result r = new Worker().reads(row(5, 2, ACTIVE));
    assertOutcome(r, List.of(new Load(5, 2)), Map.of(5, new Holding(2, LOADING)));
  }

  @Test
  void movingLeaseIsReleasedGracefully() {
    Result r = new Worker().holds(4, 9, CONSUMING).reads(row(4, 9, MOVING));
    assertOutcome(r, List.of(new Release(4, 9)), Map.of(4, new Holding(9, RELEASING)));
  }

  @Test
  void movingLeaseNotHeldIsHandedStraightBack() {
    Result r = new Worker().reads(row(4, 9, MOVING));
    assertOutcome(r, List.of(new HandBack(4, 9)), Map.of());
  }

  @Test
  void releasingSlotKeepsReleasingWhileItsRowSaysMovingOrDrainingOld() {
    Worker w = new Worker().holds(4, 9, RELEASING).holds(6, 9, RELEASING);
    Result r = w.reads(row(4, 9, MOVING), row(6, 9, DRAINING_OLD));
    assertEquals(List.of(), r.actions());
    assertSame(w.holdings.get(4), r.holdings().get(4), "an unchanged holding is the same instance (callbacks compare instances)");
  }

  @Test
  void newEpochDropsTheSlotAtOnce() {
    Result r = new Worker().holds(2, 5, CONSUMING).reads(row(2, 6, LOADING_NEW));
    assertOutcome(r, List.of(new Drop(2, 5), new Load(2, 6)), Map.of(2, new Holding(6, LOADING)), "the old epoch stops before the new one loads");
  }

  @Test
  void aReshardsEpochBumpOfAnActiveSlotReloadsItsDerivedState() {
    Result r = new Worker().holds(67, 5, CONSUMING).reads(row(67, 6, ACTIVE));
    assertOutcome(r, List.of(new Drop(67, 5), new Load(67, 6)), Map.of(67, new Holding(6, LOADING)),
        "the same owner, a new epoch (moved devices arrived): stop, then load the slot again (INV-10)");
  }

  @Test
  void slotMissingFromTheReadIsDropped() {
    Result r = new Worker().holds(2, 5, CONSUMING).holds(8, 1, LOADING).reads();
    assertOutcome(r, List.of(new Drop(2, 5), new Drop(8, 1)), Map.of());
  }

  @Test
  void drainingOldRowDropsASlotNotBeingReleased() {
    Result r = new Worker().holds(1, 3, CONSUMING).reads(row(1, 3, DRAINING_OLD));
    assertOutcome(r, List.of(new Drop(1, 3)), Map.of());
  }

  @Test
  void readOlderThanALocalChangeSaysNothingAboutThatSlot() {
    // slot 1 was just taken for loading after the read was sent; slot 2 was just released: the read knows neither
    Worker w = new Worker().holds(1, 4, LOADING).touchedAt(1, READ + 1).touchedAt(2, READ + 2);
    Result r = w.reads(row(2, 8, MOVING), row(3, 1, ACTIVE));
    assertOutcome(r, List.of(new Load(3, 1)), Map.of(1, new Holding(4, LOADING), 3, new Holding(1, LOADING)),
        "no drop of slot 1, no second hand-back of slot 2");
  }

  @Test
  void readSentAfterTheLocalChangeDecidesAgain() {
    Result r = new Worker().holds(1, 4, LOADING).touchedAt(1, READ - 1).reads();
    assertEquals(List.of(new Drop(1, 4)), r.actions());
  }

  @Test
  void deadWorkerDropsEverything() {
    Result r = new Worker().in(WorkerState.DEAD).holds(1, 1, CONSUMING).holds(2, 1, LOADING).holds(3, 1, RELEASING)
        .reads(row(1, 1, ACTIVE), row(2, 1, LOADING_NEW), row(3, 1, MOVING), row(4, 1, ACTIVE));
    assertOutcome(r, List.of(new Drop(1, 1), new Drop(2, 1), new Drop(3, 1)), Map.of(), "and takes nothing new");
  }

  @Test
  void warmingWorkerTakesNothing() {
    Result r = new Worker().in(WorkerState.WARMING).reads(row(1, 1, LOADING_NEW), row(2, 1, ACTIVE));
    assertEquals(List.of(), r.actions());
  }

  @Test
  void stoppingWorkerHandsAnActiveSlotItDoesNotHoldStraightBack() {
    Result r = new Worker().in(WorkerState.DRAINING).stopping().reads(row(6, 2, ACTIVE));
    assertOutcome(r, List.of(new HandBack(6, 2)), Map.of());
  }

  @Test
  void stoppingWorkerHandsLoadingSlotsStraightBack() {
    Result r = new Worker().in(WorkerState.DRAINING).stopping().reads(row(6, 2, LOADING_NEW));
    assertOutcome(r, List.of(new HandBack(6, 2)), Map.of());
  }

  @Test
  void stoppingWorkerStillFollowsItsLeasesWhateverItsStateSays() {
    // the database may still say REGISTERED while a SIGTERM is handled: the moves still go through
    Result r = new Worker().in(WorkerState.REGISTERED).stopping().holds(1, 1, CONSUMING).reads(row(1, 1, MOVING));
    assertEquals(List.of(new Release(1, 1)), r.actions());
  }

  @Test
  void releaseAllReleasesConsumingSlotsAndHandsLoadingOnesBack() {
    Map<Integer, Holding> held = Map.of(1, new Holding(3, CONSUMING), 2, new Holding(4, LOADING), 3, new Holding(5, RELEASING));
    Result r = LeaseReconciler.releaseAll(held);
    assertOutcome(r, List.of(new Release(1, 3), new Drop(2, 4), new HandBack(2, 4)),
        Map.of(1, new Holding(3, RELEASING), 3, new Holding(5, RELEASING)), "a releasing slot is already on its way");
  }
}
