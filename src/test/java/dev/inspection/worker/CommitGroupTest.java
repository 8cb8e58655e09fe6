package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class CommitGroupTest {
  @Test
  void aCommitTakesTheLingeringSlotsAlongOnlyWhenNoneIsInFlightAndFewLinger() {
    assertTrue(CommitGroup.takesAlong(true, 0, 1));
    assertTrue(CommitGroup.takesAlong(true, 0, CommitGroup.TAKE_ALONG_MAX_SLOTS), "an idle node of 16 or 32 slots: all of them");
    assertFalse(CommitGroup.takesAlong(true, 0, CommitGroup.TAKE_ALONG_MAX_SLOTS + 1), "most slots linger: their batches fill by themselves");
    assertFalse(CommitGroup.takesAlong(true, 1, 1), "a transaction in flight: the next ones group anyway");
    assertFalse(CommitGroup.takesAlong(true, 0, 0), "nothing lingers");
    assertFalse(CommitGroup.takesAlong(false, 0, 1), "worker.commit.take.along=false");
  }
}
