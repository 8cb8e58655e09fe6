package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class HistoryLockTest {
  @Test
  void historyIsWrittenUntilAWriteTimesOutThenSpilledWithoutTryingUntilTheProbeIsDue() {
    HistoryLock h = new HistoryLock();
    assertTrue(h.writesHistory(0));
    assertTrue(h.writesHistory(0), "not locked: every batch writes its history, several at once");
    assertFalse(h.locked());
    assertTrue(h.timedOut(2_000), "the first timeout begins a spell");
    assertFalse(h.timedOut(2_100), "a second batch of the same spell timing out is not a new one");
    assertTrue(h.locked());
    assertFalse(h.writesHistory(2_100 + HistoryLock.PROBE_AFTER_MS - 1), "before the probe is due, batches spill without waiting");
  }

  @Test
  void onceDueOneBatchProbesAtATimeAndASucceededWriteEndsTheSpell() {
    HistoryLock h = new HistoryLock();
    h.timedOut(1_000);
    long due = 1_000 + HistoryLock.PROBE_AFTER_MS;
    assertTrue(h.writesHistory(due), "the first batch after the wait is the probe");
    assertFalse(h.writesHistory(due + 1), "while the probe is out, the others spill");
    assertTrue(h.locked(), "a probe under way does not free history for the back-fill");
    assertEquals(due + 500 - 1_000, h.wrote(due + 500), "how long the spell lasted");
    assertFalse(h.locked());
    assertTrue(h.writesHistory(due + 501));
    assertEquals(-1, h.wrote(due + 600), "a write outside a spell ends none");
  }

  @Test
  void aProbeThatTimesOutPutsTheNextOffAndOneThatSaysNothingLetsAnotherTryAtOnce() {
    HistoryLock h = new HistoryLock();
    h.timedOut(0);
    long due = HistoryLock.PROBE_AFTER_MS;
    assertTrue(h.writesHistory(due));
    assertFalse(h.timedOut(due + 2_000), "still the same spell");
    assertFalse(h.writesHistory(due + 2_000 + HistoryLock.PROBE_AFTER_MS - 1), "the next probe waits again");
    assertTrue(h.writesHistory(due + 2_000 + HistoryLock.PROBE_AFTER_MS));
    h.probeEnded(); // e.g. the probe's batch had no history row, or PostgreSQL did not answer
    assertTrue(h.locked(), "nothing learnt: still locked");
    assertTrue(h.writesHistory(due + 2_000 + HistoryLock.PROBE_AFTER_MS + 1), "another batch may probe at once");
  }
}
