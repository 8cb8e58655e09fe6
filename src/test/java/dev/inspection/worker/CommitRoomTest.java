package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

class CommitRoomTest {
  private final List<String> ran = new ArrayList<>();

  private BooleanSupplier go(String owner) {
    return () -> ran.add(owner);
  }

  @Test
  void aBatchStartsAtOnceWhileFewerResultsThanTheLimitAreQueuedOrBeingPlanned() {
    CommitRoom room = new CommitRoom(100);
    assertTrue(room.admits("a", false, go("a")));
    room.reserve("a", 60);
    assertTrue(room.admits("b", false, go("b")), "60 of 100: room left");
    room.reserve("b", 50);
    assertFalse(room.admits("c", false, go("c")), "110 reserved: c waits");
    assertEquals(List.of("c"), room.waiters());
    assertTrue(ran.isEmpty(), "nothing runs until there is room and someone wakes the waiters");
  }

  @Test
  void aReservationBecomesQueuedResultsThenLeavesWithItsTransaction() {
    CommitRoom room = new CommitRoom(100);
    room.reserve("a", 80);
    room.queued("a", 70); // the planner's count, not the parse's
    assertEquals(0, room.reservedRows());
    assertEquals(70, room.queuedRows());
    room.reserve("b", 40);
    assertFalse(room.hasRoom(), "70 queued + 40 being planned");
    room.dequeued(70);
    assertTrue(room.hasRoom());
    room.release("a"); // its batch ended after it was queued: nothing left to release
    assertEquals(40, room.reservedRows());
    room.release("b"); // nothing to write: the reservation goes
    room.release("b");
    assertEquals(0, room.reservedRows(), "a second release changes nothing");
  }

  @Test
  void whenRoomFreesTheSlotsWithCriticalResultsGoFirstThenTheRestInTheOrderTheyBeganToWait() {
    CommitRoom room = new CommitRoom(10);
    room.reserve("busy", 10);
    assertFalse(room.admits("n1", false, go("n1")));
    assertFalse(room.admits("c1", true, go("c1")));
    assertFalse(room.admits("n2", false, go("n2")));
    assertFalse(room.admits("n3", false, go("n3")));
    assertFalse(room.admits("n2", true, go("n2")), "a critical result reached n2 while it waited");
    assertFalse(room.admits("c1", false, go("c1")), "asking again without critical results does not lose c1's place");
    assertEquals(List.of("c1", "n2", "n1", "n3"), room.waiters());
    room.release("busy");
    room.wake();
    assertEquals(List.of("c1", "n2", "n1", "n3"), ran, "nobody reserved: every waiter runs");
    assertTrue(room.waiters().isEmpty());
  }

  @Test
  void wakingStopsOnceTheWokenSlotsHaveFilledTheRoomAgain() {
    CommitRoom room = new CommitRoom(10);
    room.reserve("busy", 10);
    for (String o : List.of("a", "b", "c")) room.admits(o, false, () -> {
      ran.add(o);
      room.reserve(o, 6); // starts its batch: picks and parses 6 results
      return true;
    });
    room.release("busy");
    room.wake();
    assertEquals(List.of("a", "b"), ran, "after a and b 12 of 10 are reserved: c waits on");
    assertEquals(List.of("c"), room.waiters());
    room.release("a");
    room.wake();
    assertEquals(List.of("a", "b", "c"), ran);
  }

  @Test
  void aWakeFromInsideAWokenSlotRunsTheRestOnceWithoutRecursing() {
    CommitRoom room = new CommitRoom(10);
    room.reserve("busy", 10);
    room.admits("a", false, () -> {
      ran.add("a");
      room.wake(); // the slot's batch ended at once and its release woke the room again
      return true;
    });
    room.admits("b", false, go("b"));
    room.release("busy");
    room.wake();
    assertEquals(List.of("a", "b"), ran);
  }

  @Test
  void aClosedSlotNoLongerWaitsAndAnAdmittedOneLeavesTheLine() {
    CommitRoom room = new CommitRoom(10);
    room.reserve("busy", 10);
    room.admits("gone", false, go("gone"));
    room.admits("x", true, go("x"));
    room.forget("gone");
    assertFalse(room.waiting("gone"));
    assertTrue(room.waiting("x"));
    room.release("busy");
    assertTrue(room.admits("x", true, go("x")), "room again: x asks before anyone woke it and goes at once");
    assertFalse(room.waiting("x"));
    room.wake();
    assertTrue(ran.isEmpty(), "nobody was left to wake");
  }

  @Test
  void aSlotWhoseBatchIsStillInFlightKeepsItsPlaceAndTheNextOneGoes() {
    CommitRoom room = new CommitRoom(10);
    room.reserve("busy", 10);
    boolean[] inFlight = {true};
    room.admits("a", true, () -> {
      if (inFlight[0]) return false; // its high lane went ahead: that batch has not ended yet
      ran.add("a");
      return true;
    });
    room.admits("b", false, go("b"));
    room.release("busy");
    room.wake();
    assertEquals(List.of("b"), ran);
    assertEquals(List.of("a"), room.waiters(), "a keeps its place at the head of the line");
    inFlight[0] = false;
    room.wake();
    assertEquals(List.of("b", "a"), ran);
    assertTrue(room.waiters().isEmpty());
  }
}
