package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.ManualClock;
import dev.inspection.messaging.Priority;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BatchPickerTest {
  /** A clock the test moves by hand. */
  private final ManualClock clock = new ManualClock(1_000_000);
  private final BatchPicker<String> picker = new BatchPicker<>(8, 200, clock);

  private void add(Priority p, String prefix, int n) {
    for (int i = 0; i < n; i++) picker.add(p, prefix + i);
  }

  private static long count(List<String> batch, String prefix) {
    return batch.stream().filter(d -> d.startsWith(prefix)).count();
  }

  @Test
  void highPriorityFillsThreeQuartersAndNormalTheRest() {
    add(Priority.HIGH, "h", 20);
    add(Priority.NORMAL, "n", 20);
    List<String> batch = picker.take();
    assertEquals(8, batch.size());
    assertEquals(6, count(batch, "h"), "high takes three quarters of the batch");
    assertEquals(2, count(batch, "n"), "normal still gets its quarter");
    assertEquals(List.of("h0", "h1", "h2", "h3", "h4", "h5", "n0", "n1"), batch, "each queue in arrival order");
  }

  @Test
  void highTakesTheShareNormalLeavesUnusedButNormalStaysAtItsShareWhileHighHoldsSomething() {
    assertEquals(Map.of("h", 7L, "n", 1L), shares(20, 1), "high takes the normal share nobody needs");
    assertEquals(Map.of("h", 1L, "n", 2L), shares(1, 20), "a batch with a critical result stays short: it commits sooner");
    assertEquals(Map.of("h", 0L, "n", 8L), shares(0, 20), "without high, normal fills the batch");
  }

  @Test
  void withFillBesideHighABatchWithACriticalResultIsFilledUpWithNormal() {
    BatchPicker<String> p = new BatchPicker<>(8, 200, new BatchPicker.Lanes(6, 2, 1, BatchPicker.STARVATION_MS, true), clock);
    add(p, Priority.HIGH, "h", 1, clock.millis());
    add(p, Priority.NORMAL, "n", 20, clock.millis());
    assertEquals(List.of("h0", "n0", "n1", "n2", "n3", "n4", "n5", "n6"), p.take());
  }

  /** The make-up of the first batch out of a mailbox with {@code high} and {@code normal} deliveries. */
  private Map<String, Long> shares(int highCount, int normalCount) {
    picker.clear();
    add(Priority.HIGH, "h", highCount);
    add(Priority.NORMAL, "n", normalCount);
    List<String> batch = picker.take();
    return Map.of("h", count(batch, "h"), "n", count(batch, "n"));
  }

  /** A mailbox of 200-delivery batches with the given lane weights and the default starvation bound. */
  private BatchPicker<String> picker200(BatchPicker.Lanes lanes) {
    return new BatchPicker<>(200, 200, lanes, clock);
  }

  private static void add(BatchPicker<String> p, Priority lane, String prefix, int n, long collectedAtMs) {
    for (int i = 0; i < n; i++) p.add(lane, prefix + i, collectedAtMs);
  }

  @Test
  void highAndNormalShareThreeToOneBatchAfterBatchWhileBothHaveABacklog() {
    BatchPicker<String> p = picker200(BatchPicker.Lanes.DEFAULT);
    add(p, Priority.HIGH, "h", 3_000, clock.millis());
    add(p, Priority.NORMAL, "n", 3_000, clock.millis());
    long high = 0;
    long normal = 0;
    for (int b = 0; b < 10; b++) {
      List<String> batch = p.take();
      assertEquals(200, batch.size());
      assertEquals(150, count(batch, "h"), "batch " + b);
      high += count(batch, "h");
      normal += count(batch, "n");
    }
    assertEquals(3.0, (double) high / normal, 1e-9, "3:1 over ten batches");
  }

  @Test
  void anOldBacklogAsAWholeKeepsTheThreeToOneShare() {
    // overload: everything normal the worker holds is far over the starvation bound, yet high keeps its share
    BatchPicker<String> p = picker200(BatchPicker.Lanes.DEFAULT);
    add(p, Priority.NORMAL, "n", 1_000, clock.millis() - 10 * BatchPicker.STARVATION_MS);
    add(p, Priority.HIGH, "h", 1_000, clock.millis());
    BatchPicker.Take<String> t = p.pick();
    assertEquals(150, count(t.batch(), "h"));
    assertEquals(50, count(t.batch(), "n"));
    assertEquals(0, t.lanes().get(Priority.NORMAL).starved(), "normal's head is taken in its own share: nothing needed the starvation rule");
    assertEquals(10 * BatchPicker.STARVATION_MS, t.lanes().get(Priority.NORMAL).oldestAgeMs());
  }

  @Test
  void lowGetsASmallerShareThanNormalAndComesLastInArrivalOrder() {
    BatchPicker<String> p = picker200(BatchPicker.Lanes.DEFAULT);
    add(p, Priority.LOW, "l", 500, clock.millis());
    add(p, Priority.NORMAL, "n", 500, clock.millis());
    add(p, Priority.HIGH, "h", 500, clock.millis());
    List<String> batch = p.take();
    assertEquals(200, batch.size());
    long h = count(batch, "h");
    long n = count(batch, "n");
    long l = count(batch, "l");
    assertEquals(List.of(134L, 44L, 22L), List.of(h, n, l), "6:2:1, the rounding left-over to high");
    assertEquals("h0", batch.get(0));
    assertEquals("n0", batch.get((int) h));
    assertEquals("l0", batch.get((int) (h + n)));
    assertEquals("l21", batch.get(199), "each lane in arrival order, low last");
  }

  @Test
  void lowAloneOrWithNormalUsesTheWholeBatchWhenHighHoldsNothing() {
    BatchPicker<String> p = picker200(BatchPicker.Lanes.DEFAULT);
    add(p, Priority.LOW, "l", 500, clock.millis());
    assertEquals(200, count(p.take(), "l"), "nobody else wants the batch");
    add(p, Priority.NORMAL, "n", 500, clock.millis());
    List<String> batch = p.take();
    assertEquals(134, count(batch, "n"), "normal:low 2:1 without high (the rounding left-over to normal)");
    assertEquals(66, count(batch, "l"));
  }

  @Test
  void aTinyBatchGivesItsPlacesToHighThenNormal() {
    BatchPicker<String> p = new BatchPicker<>(2, 200, BatchPicker.Lanes.DEFAULT, clock);
    add(p, Priority.LOW, "l", 5, clock.millis());
    add(p, Priority.NORMAL, "n", 5, clock.millis());
    add(p, Priority.HIGH, "h", 5, clock.millis());
    assertEquals(List.of("h0", "n0"), p.take());
  }

  /** Strict priority (normal and low weigh 0): only the starvation rule lets them through while high floods. */
  private static final BatchPicker.Lanes STRICT = new BatchPicker.Lanes(1, 0, 0, BatchPicker.STARVATION_MS, false);

  @Test
  void aNormalResultOverTheAgeBoundIsTakenAtOnceEvenWhileHighFloods() {
    BatchPicker<String> p = new BatchPicker<>(8, 200, STRICT, clock);
    add(p, Priority.HIGH, "h", 100, clock.millis());
    // it reached the worker only now, but was collected over a minute ago: the age counts from collected_at
    p.add(Priority.NORMAL, "n-old", clock.millis() - BatchPicker.STARVATION_MS - 1);
    p.add(Priority.NORMAL, "n-young", clock.millis() - 1_000);
    BatchPicker.Take<String> t = p.pick();
    assertEquals(List.of("h0", "h1", "h2", "h3", "h4", "h5", "h6", "n-old"), t.batch());
    assertEquals(1, t.lanes().get(Priority.NORMAL).starved());
    assertEquals(8, count(p.take(), "h"), "the young one waits while high floods");
  }

  @Test
  void aResultExactlyAtTheBoundIsNotYetStarvingAndIsTakenOnceItPassesIt() {
    BatchPicker<String> p = new BatchPicker<>(8, 200, STRICT, clock);
    add(p, Priority.HIGH, "h", 100, clock.millis());
    p.add(Priority.NORMAL, "n0", clock.millis() - 30_000);
    clock.advance(30_000);
    assertEquals(0, count(p.take(), "n"), "30 s in the mailbox after 30 s on the way: exactly the bound");
    clock.advance(1);
    assertEquals(List.of("n0"), p.take().stream().filter(d -> d.startsWith("n")).toList());
  }

  @Test
  void aLaneWithoutWeightWaitsWhileHighHoldsSomethingAndFillsABatchWithoutHigh() {
    BatchPicker<String> p = new BatchPicker<>(8, 200, STRICT, clock);
    add(p, Priority.HIGH, "h", 3, clock.millis());
    add(p, Priority.NORMAL, "n", 10, clock.millis());
    assertEquals(List.of("h0", "h1", "h2"), p.take());
    BatchPicker.Take<String> t = p.pick();
    assertEquals(List.of("n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"), t.batch());
    assertEquals(0, t.lanes().get(Priority.NORMAL).starved(), "young ones: free places, not starvation");
  }

  @Test
  void starvingLanesTakeAtMostAQuarterEachSoHighKeepsHalf() {
    BatchPicker<String> p = picker200(STRICT);
    long old = clock.millis() - 2 * BatchPicker.STARVATION_MS;
    add(p, Priority.HIGH, "h", 1_000, clock.millis());
    add(p, Priority.NORMAL, "n", 1_000, old);
    add(p, Priority.LOW, "l", 1_000, old);
    BatchPicker.Take<String> t = p.pick();
    assertEquals(100, count(t.batch(), "h"));
    assertEquals(50, t.lanes().get(Priority.NORMAL).starved());
    assertEquals(50, t.lanes().get(Priority.LOW).starved());
    assertEquals(List.of("n0", "n49"), List.of(t.batch().get(100), t.batch().get(149)), "the oldest first");
  }

  @Test
  void theHighLaneAloneGoesAheadInArrivalOrderAndLeavesTheOtherLanesForTheSlotsTurn() {
    add(Priority.NORMAL, "n", 3);
    add(Priority.HIGH, "h", 10);
    add(Priority.LOW, "l", 2);
    assertTrue(picker.hasHigh());
    BatchPicker.Take<String> t = picker.pickHigh();
    assertEquals(List.of("h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7"), t.batch(), "at most batchMax, oldest first");
    assertEquals(8, t.lanes().get(Priority.HIGH).taken());
    assertEquals(7, picker.size(), "2 high, 3 normal and 2 low wait");
    assertEquals(List.of("h8", "h9"), picker.pickHigh().batch());
    assertTrue(!picker.hasHigh());
    assertTrue(picker.pickHigh().batch().isEmpty(), "no high: an empty batch");
    assertEquals(List.of("n0", "n1", "n2", "l0", "l1"), picker.take());
  }

  @Test
  void eachLaneReportsHowManyItGaveAndTheAgeOfItsOldest() {
    BatchPicker<String> p = picker200(BatchPicker.Lanes.DEFAULT);
    p.add(Priority.HIGH, "h0", clock.millis() - 300);
    p.add(Priority.HIGH, "h1", clock.millis() - 100);
    p.add(Priority.LOW, "l0", clock.millis() + 5_000); // a probe clock ahead of ours counts as age 0
    Map<Priority, BatchPicker.LaneTake> lanes = p.pick().lanes();
    assertEquals(new BatchPicker.LaneTake(2, 300, 0), lanes.get(Priority.HIGH));
    assertEquals(new BatchPicker.LaneTake(1, 0, 0), lanes.get(Priority.LOW));
    assertTrue(!lanes.containsKey(Priority.NORMAL), "a lane that gave nothing is not listed");
  }

  @Test
  void aSmallBatchLingersUntilItsOldestDeliveryWaitedTheLingerTime() {
    add(Priority.NORMAL, "n", 1);
    assertEquals(200, picker.dueInMs(false), "nothing is due before the linger");
    clock.advance(150);
    add(Priority.HIGH, "h", 1);
    assertEquals(50, picker.dueInMs(false), "the linger counts from the oldest delivery");
    clock.advance(50);
    assertEquals(0, picker.dueInMs(false), "due once the oldest waited the linger time");
    assertEquals(List.of("h0", "n0"), picker.take());
  }

  @Test
  void aFullMailboxIsDueAtOnce() {
    add(Priority.NORMAL, "n", 7);
    assertTrue(picker.dueInMs(false) > 0);
    add(Priority.NORMAL, "n", 1);
    assertEquals(0, picker.dueInMs(false), "batchMax deliveries do not wait for the linger");
  }

  @Test
  void flushingMakesAnythingDueAtOnce() {
    add(Priority.NORMAL, "n", 1);
    assertEquals(0, picker.dueInMs(true));
  }

  @Test
  void aBatchNeverExceedsBatchMaxAndTheRestStays() {
    add(Priority.NORMAL, "n", 19);
    assertEquals(8, picker.take().size());
    assertEquals(8, picker.take().size());
    assertEquals(3, picker.size());
    assertEquals(List.of("n16", "n17", "n18"), picker.take());
  }

  @Test
  void anEmptyMailboxIsNeverDueAndYieldsAnEmptyBatch() {
    assertEquals(-1, picker.dueInMs(false));
    assertEquals(-1, picker.dueInMs(true));
    assertTrue(picker.take().isEmpty());
    add(Priority.HIGH, "h", 3);
    picker.clear();
    assertTrue(picker.isEmpty());
    assertEquals(-1, picker.dueInMs(false));
  }

  @Test
  void theFirstBatchAfterAStartOrAClearIsSmallThenBatchesAreFull() {
    ManualClock clock = new ManualClock(1_000_000);
    BatchPicker<String> m = new BatchPicker<String>(8, 200, clock).firstBatch(3);
    for (int i = 0; i < 20; i++) m.add(Priority.NORMAL, "n" + i);
    assertEquals(0, m.dueInMs(false), "due as soon as the first batch's 3 are there");
    assertEquals(List.of("n0", "n1", "n2"), m.take(), "the first batch holds 3");
    assertEquals(8, m.take().size(), "then full batches");
    m.clear(); // the slot's channels closed: it starts again small
    m.add(Priority.NORMAL, "x0");
    m.add(Priority.NORMAL, "x1");
    assertTrue(m.dueInMs(false) > 0, "two of three: still lingering");
    m.add(Priority.NORMAL, "x2");
    assertEquals(0, m.dueInMs(false));
    assertEquals(3, m.take().size());
  }
}
