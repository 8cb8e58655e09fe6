package dev.inspection.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.List;
import org.junit.jupiter.api.Test;

class SlotGateTest {
  private static OutboxRow row(long id, String key) {
    return new OutboxRow(id, "m" + id, key, new byte[10], id);
  }

  private static List<Long> ids(List<OutboxRow> rows) {
    return rows.stream().map(OutboxRow::id).toList();
  }

  private final SlotGate gate = new SlotGate();

  @Test
  void aKeyWithNothingUnconfirmedPublishesAtOnce() {
    assertEquals(List.of(1L, 2L, 3L), ids(gate.admit(List.of(row(1, "a"), row(2, "b"), row(3, "a")), 0)));
    assertEquals(0, gate.held());
  }

  @Test
  void whileAMessageIsUnconfirmedItsKeyGathersAndTheOthersDoNotWait() {
    gate.admit(List.of(row(1, "a")), 0);
    gate.published("a", 1);
    assertEquals(List.of(3L), ids(gate.admit(List.of(row(2, "a"), row(3, "b"), row(4, "a")), 0)));
    assertEquals(2, gate.held());
    assertEquals(List.of(2L, 4L), ids(gate.settled("a", 0)), "everything gathered goes once the key is settled, in order");
    assertEquals(0, gate.held());
  }

  @Test
  void heldRowsWaitForEveryUnconfirmedMessageOfTheirKey() {
    gate.published("a", 2);
    gate.admit(List.of(row(5, "a")), 0);
    assertEquals(List.of(), gate.settled("a", 0), "one of two messages settled");
    assertEquals(List.of(5L), ids(gate.settled("a", 0)));
  }

  @Test
  void releasedRowsArePublishedAtOnceAndTheKeyGathersAgainBehindThem() {
    gate.published("a", 1);
    gate.admit(List.of(row(1, "a")), 0);
    List<OutboxRow> released = gate.settled("a", 0);
    assertEquals(List.of(1L), ids(released));
    gate.published("a", 1); // the caller submits the released rows at once, on the same thread
    assertEquals(List.of(), ids(gate.admit(List.of(row(2, "a")), 0)), "row 2 waits behind row 1");
    assertEquals(List.of(2L), ids(gate.settled("a", 0)));
  }

  @Test
  void aSettlementOfAnUnknownKeyReleasesNothing() {
    assertEquals(List.of(), gate.settled("nobody", 0));
  }

  @Test
  void clearForgetsEverythingAndReturnsWhatWasHeld() {
    gate.published("a", 1);
    gate.admit(List.of(row(1, "a"), row(2, "a")), 0);
    assertEquals(List.of(1L, 2L), ids(gate.clear()));
    assertEquals(0, gate.held());
    assertEquals(List.of(3L), ids(gate.admit(List.of(row(3, "a")), 0)));
  }

  @Test
  void whileGatheringAKeyWaitsUntilItHoldsEnoughRows() {
    SlotGate g = new SlotGate(3, 500);
    g.gathering(true);
    assertEquals(List.of(), ids(g.admit(List.of(row(1, "a"), row(2, "b"), row(3, "a")), 0)), "nothing unconfirmed, yet both keys gather");
    assertEquals(3, g.held());
    assertEquals(List.of(1L, 3L, 4L), ids(g.admit(List.of(row(4, "a")), 10)), "the third row of a goes with the two before it, in order");
    assertEquals(1, g.held(), "b still gathers");
    assertEquals(List.of(), ids(g.due(499)));
  }

  @Test
  void whileGatheringAKeyGoesOnceItsOldestRowWaitedLongEnough() {
    SlotGate g = new SlotGate(50, 500);
    g.gathering(true);
    g.admit(List.of(row(1, "a")), 100);
    g.admit(List.of(row(2, "b")), 300);
    assertEquals(List.of(), ids(g.due(599)));
    assertEquals(List.of(1L), ids(g.due(600)), "a's oldest row waited 500 ms; b's only 300");
    assertEquals(List.of(2L), ids(g.due(800)));
    assertEquals(0, g.held());
  }

  @Test
  void whileGatheringAKeyWithAnUnconfirmedMessageWaitsForItsSettlementEvenWhenDue() {
    SlotGate g = new SlotGate(2, 500);
    g.gathering(true);
    g.published("a", 1);
    g.admit(List.of(row(1, "a"), row(2, "a"), row(3, "a")), 0);
    assertEquals(List.of(), ids(g.due(10_000)), "enough rows and long enough, but a message of a is unconfirmed");
    assertEquals(List.of(1L, 2L, 3L), ids(g.settled("a", 10_000)));
  }

  @Test
  void aSettlementWhileGatheringReleasesOnlyWhatHasWaitedLongEnough() {
    SlotGate g = new SlotGate(50, 500);
    g.gathering(true);
    g.published("a", 1);
    g.admit(List.of(row(1, "a")), 0);
    assertEquals(List.of(), ids(g.settled("a", 100)), "settled after 100 ms: a keeps gathering");
    assertEquals(List.of(1L), ids(g.due(500)));
  }

  @Test
  void whenGatheringStopsEveryWaitingKeyIsDueAtOnceAndNewRowsGoStraightAway() {
    SlotGate g = new SlotGate(50, 500);
    g.gathering(true);
    g.admit(List.of(row(1, "a"), row(2, "b")), 0);
    g.gathering(false);
    assertEquals(List.of(1L, 2L), ids(g.due(1)));
    assertEquals(List.of(3L), ids(g.admit(List.of(row(3, "a")), 2)));
  }

  @Test
  void aBusyProbeGathersForItsShorterTimeAndGoingBehindLengthensIt() {
    SlotGate g = new SlotGate(50, 500);
    g.gatherFor(200);
    assertEquals(200, g.gatheringMs());
    g.admit(List.of(row(1, "a")), 0);
    assertEquals(List.of(), ids(g.due(199)));
    assertEquals(List.of(1L), ids(g.due(200)), "busy: 200 ms, not the 500 of a fleet behind");
    g.admit(List.of(row(2, "a")), 300);
    g.gathering(true);
    assertEquals(List.of(), ids(g.due(500)), "behind now: the held row waits the longer time");
    assertEquals(List.of(2L), ids(g.due(800)));
    g.gatherFor(0);
    assertEquals(List.of(3L), ids(g.admit(List.of(row(3, "a")), 801)), "neither: a lone row goes at once");
  }

  @Test
  void gatheringNeedsBothARowCountAndATime() {
    SlotGate off = new SlotGate(50, 0);
    assertFalse(off.gathers());
    off.gathering(true);
    assertFalse(off.gathering(), "asked to gather, it cannot");
    off.gatherFor(200);
    assertFalse(off.gathering(), "not for being busy either: outbox.publish.gather.ms=0 turns all gathering off");
    assertEquals(List.of(1L), ids(off.admit(List.of(row(1, "a")), 0)), "0 ms: no gathering");
    SlotGate one = new SlotGate(1, 500);
    assertFalse(one.gathers());
    one.gathering(true);
    assertEquals(List.of(1L), ids(one.admit(List.of(row(1, "a")), 0)), "one row is already enough");
  }
}
