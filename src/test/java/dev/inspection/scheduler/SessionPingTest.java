package dev.inspection.scheduler;

import static dev.inspection.scheduler.SessionPing.Verdict.LOST;
import static dev.inspection.scheduler.SessionPing.Verdict.SEND;
import static dev.inspection.scheduler.SessionPing.Verdict.WAIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class SessionPingTest {
  @Test
  void anAnsweredPingIsFollowedByTheNextOne() {
    SessionPing p = new SessionPing(1000, 3);
    assertEquals(SEND, p.tick(0));
    p.answered(10);
    assertEquals(SEND, p.tick(1000));
    p.answered(1010);
    assertEquals(SEND, p.tick(2000));
  }

  @Test
  void aPingUnansweredForThePatienceOfOnTimeTicksLosesTheSession() {
    SessionPing p = new SessionPing(1000, 3);
    assertEquals(SEND, p.tick(0));
    assertEquals(WAIT, p.tick(1000));
    assertEquals(WAIT, p.tick(2000));
    assertEquals(WAIT, p.tick(3000));
    assertEquals(LOST, p.tick(4000));
  }

  @Test
  void aLateTickAfterAStallOfThisProcessRestartsTheWindowInsteadOfDeposing() {
    SessionPing p = new SessionPing(1000, 3);
    assertEquals(SEND, p.tick(0));
    assertEquals(WAIT, p.tick(1000));
    // the event loop was blocked 3.5 s: the tick is late, the answer may sit unread in the socket
    assertEquals(WAIT, p.tick(4500));
    // catch-up tick of a fixed-rate timer right after: still within the fresh window
    assertEquals(WAIT, p.tick(4501));
    p.answered(4600);
    assertEquals(SEND, p.tick(5500));
  }

  @Test
  void aStalledProcessStillLosesASessionThatNeverAnswersAfterwards() {
    SessionPing p = new SessionPing(1000, 3);
    p.tick(0);
    assertEquals(WAIT, p.tick(5000)); // late: restarted at 5000
    assertEquals(WAIT, p.tick(6000));
    assertEquals(WAIT, p.tick(7000));
    assertEquals(WAIT, p.tick(8000));
    assertEquals(LOST, p.tick(9000));
  }

  @Test
  void aNewSessionStartsWithNothingOutstanding() {
    SessionPing p = new SessionPing(1000, 3);
    p.tick(0);
    p.tick(1000);
    p.reset();
    assertEquals(SEND, p.tick(60_000)); // not "late": no tick of this session before
  }

  @Test
  void theStepDownMessageTellsAStallOfThisProcessFromASilentSession() {
    SessionPing stalled = new SessionPing(1000, 3);
    stalled.tick(0);
    stalled.answered(5);
    stalled.tick(1000);
    stalled.tick(7600); // this process stalled 6.6 s: PostgreSQL may end the idle session meanwhile
    assertEquals("last tick 100 ms ago, last answer 7695 ms ago, longest gap between ticks 6600 ms (ticks every 1000 ms)", stalled.describe(7700));

    SessionPing silent = new SessionPing(1000, 3);
    assertEquals("last tick none, last answer none, longest gap between ticks 0 ms (ticks every 1000 ms)", silent.describe(0));
    for (long t = 0; t <= 4000; t += 1000) silent.tick(t);
    assertEquals("last tick 0 ms ago, last answer none, longest gap between ticks 1000 ms (ticks every 1000 ms)", silent.describe(4000));
    silent.reset();
    assertEquals("last tick none, last answer none, longest gap between ticks 0 ms (ticks every 1000 ms)", silent.describe(5000));
  }

  @Test
  void refusesANonsenseWindow() {
    assertThrows(IllegalArgumentException.class, () -> new SessionPing(0, 3));
    assertThrows(IllegalArgumentException.class, () -> new SessionPing(1000, 0));
  }
}
