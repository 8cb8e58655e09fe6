package dev.inspection.common;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BackoffTest {
  @Test
  void growsJittersAndStaysUnderTheCapThenResets() {
    Backoff b = new Backoff(100, 5_000);
    long first = b.next();
    assertTrue(first >= 50 && first <= 100, "first " + first);
    long last = 0;
    for (int i = 0; i < 30; i++) last = b.next();
    assertTrue(last >= 2_500 && last <= 5_000, "capped " + last);
    b.reset();
    assertTrue(b.next() <= 100);
  }

  @Test
  void theSmallestDelayIsStillAValidTimer() {
    Backoff b = new Backoff(1, 1);
    for (int i = 0; i < 20; i++) assertTrue(b.next() >= 1);
  }
}
