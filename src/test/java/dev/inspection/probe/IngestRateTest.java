package dev.inspection.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.config.ConfigException;
import org.junit.jupiter.api.Test;

class IngestRateTest {
  @Test
  void aPushTakesAllItsFramesOrNoneAndTheBucketRefillsWithTime() {
    IngestRate r = new IngestRate(100, 0);
    assertTrue(r.tryTake(60, 0));
    assertFalse(r.tryTake(60, 0), "40 left: a push of 60 is refused whole");
    assertTrue(r.tryTake(40, 0), "and took nothing");
    assertEquals(1, r.retryAfterSeconds(50, 0));
    assertTrue(r.tryTake(50, 500), "half a second refills 50");
    assertFalse(r.tryTake(1, 500));
    assertTrue(r.tryTake(100, 60_000), "never more than one second's worth");
    assertFalse(r.tryTake(101, 120_000), "a push above a second's worth never fits");
  }

  @Test
  void retryAfterSaysWhenThePushWouldFit() {
    IngestRate r = new IngestRate(10, 0);
    assertTrue(r.tryTake(10, 0));
    assertEquals(1, r.retryAfterSeconds(10, 0));
    IngestRate slow = new IngestRate(1, 0);
    assertTrue(slow.tryTake(1, 0));
    assertEquals(1, slow.retryAfterSeconds(1, 0));
  }

  @Test
  void weakPushTokensStopStartUpNamingTheKey() {
    assertTrue(IngestRoutes.tokens("").isEmpty());
    assertEquals(2, IngestRoutes.tokens("0123456789abcdef0123, fedcba9876543210fedc").size());
    assertTrue(assertThrows(ConfigException.class, () -> IngestRoutes.tokens("short")).getMessage().startsWith("probe.ingest.tokens"));
    assertThrows(ConfigException.class, () -> IngestRoutes.tokens("aaaaaaaaaaaaaaaaaaaa"));
  }
}
