package dev.inspection.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LoginThrottleTest {
  @Test
  void theFreeFailuresCostNothingThenEachFurtherOneDoublesTheWaitUpToTheCap() {
    LoginThrottle t = new LoginThrottle(3, 10_000, 100);
    assertEquals(0, t.delayAfter(3));
    assertEquals(1000, t.delayAfter(4));
    assertEquals(2000, t.delayAfter(5));
    assertEquals(8000, t.delayAfter(7));
    assertEquals(10_000, t.delayAfter(8));
    assertEquals(10_000, t.delayAfter(500));
    long now = 1_000_000;
    for (int i = 0; i < 3; i++) assertEquals(0, t.failed("op", "10.0.0.1", now));
    assertEquals(0, t.waitMs("op", "10.0.0.1", now), "within the free failures nothing waits");
    assertEquals(1000, t.failed("op", "10.0.0.1", now));
    assertEquals(1000, t.waitMs("op", "10.0.0.1", now));
    assertEquals(400, t.waitMs("op", "10.0.0.1", now + 600));
    assertEquals(0, t.waitMs("op", "10.0.0.1", now + 1000));
    assertEquals(2000, t.failed("op", "10.0.0.1", now + 1000), "the next failure doubles it");
  }

  @Test
  void theUserAndTheAddressAreCountedApart() {
    LoginThrottle t = new LoginThrottle(2, 60_000, 100);
    long now = 5_000;
    // one address guessing many names is slowed down by its address
    for (int i = 0; i < 3; i++) t.failed("user" + i, "10.0.0.9", now);
    assertTrue(t.waitMs("someone-else", "10.0.0.9", now) > 0, "the address waits whatever name it tries");
    assertEquals(0, t.waitMs("someone-else", "10.0.0.10", now), "another address with another name does not");
    // many addresses guessing one name are slowed down by the name
    for (int i = 0; i < 3; i++) t.failed("operator", "10.1.0." + i, now);
    assertTrue(t.waitMs("OPERATOR", "10.2.0.1", now) > 0, "the name waits from any address (case-insensitive)");
  }

  @Test
  void aSuccessClearsBothCountsAndTheMemoryIsBounded() {
    LoginThrottle t = new LoginThrottle(0, 60_000, 10);
    t.failed("op", "a", 0);
    assertTrue(t.waitMs("op", "a", 0) > 0);
    t.succeeded("op", "a");
    assertEquals(0, t.waitMs("op", "a", 0));
    for (int i = 0; i < 1000; i++) t.failed("name" + i, "addr" + i, 0);
    assertTrue(t.size() <= 10, "at most maxKeys remembered: " + t.size());
  }
}
