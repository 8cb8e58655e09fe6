package dev.inspection.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
    assertEquals(List.of(1L, 2L, 3L), ids(gate.admit(List.of(row(1, "a"), row(2, "b"), row(3, "a")))));
    assertEquals(0, gate.held());
  }

  @Test
  void whileAMessageIsUnconfirmedItsKeyGathersAndTheOthersDoNotWait() {
    gate.admit(List.of(row(1, "a")));
    gate.published("a", 1);
    assertEquals(List.of(3L), ids(gate.admit(List.of(row(2, "a"), row(3, "b"), row(4, "a")))));
    assertEquals(2, gate.held());
    assertEquals(List.of(2L, 4L), ids(gate.settled("a")), "everything gathered goes once the key is settled, in order");
    assertEquals(0, gate.held());
  }

  @Test
  void heldRowsWaitForEveryUnconfirmedMessageOfTheirKey() {
    gate.published("a", 2);
    gate.admit(List.of(row(5, "a")));
    assertEquals(List.of(), gate.settled("a"), "one of two messages settled");
    assertEquals(List.of(5L), ids(gate.settled("a")));
  }

  @Test
  void releasedRowsArePublishedAtOnceAndTheKeyGathersAgainBehindThem() {
    gate.published("a", 1);
    gate.admit(List.of(row(1, "a")));
    List<OutboxRow> released = gate.settled("a");
    assertEquals(List.of(1L), ids(released));
    gate.published("a", 1); // the caller submits the released rows at once, on the same thread
    assertEquals(List.of(), ids(gate.admit(List.of(row(2, "a")))), "row 2 waits behind row 1");
    assertEquals(List.of(2L), ids(gate.settled("a")));
  }

  @Test
  void aSettlementOfAnUnknownKeyReleasesNothing() {
    assertEquals(List.of(), gate.settled("nobody"));
  }

  @Test
  void clearForgetsEverythingAndReturnsWhatWasHeld() {
    gate.published("a", 1);
    gate.admit(List.of(row(1, "a"), row(2, "a")));
    assertEquals(List.of(1L, 2L), ids(gate.clear()));
    assertEquals(0, gate.held());
    assertEquals(List.of(3L), ids(gate.admit(List.of(row(3, "a")))));
  }
}
