package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.common.RetryPolicy;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** When a heartbeat renews the leases ({@link LeaseKeeper.Settings#renewDue}): often enough, and no more. */
class LeaseRenewalTest {
  private static LeaseKeeper.Settings settings(long ttlMs, long heartbeatMs) {
    return new LeaseKeeper.Settings(ttlMs, heartbeatMs, 1000, 0, new RetryPolicy(100, 1000));
  }

  /** Simulates heartbeats for {@code spanMs}; the times at which the leases are renewed. */
  private static List<Long> renewals(LeaseKeeper.Settings s, long spanMs) {
    List<Long> at = new ArrayList<>();
    long last = -1;
    for (long t = 0; t <= spanMs; t += s.heartbeatMs()) {
      if (s.renewDue(last < 0 ? -1 : t - last)) {
        at.add(t);
        last = t;
      }
    }
    return at;
  }

  @Test
  void theFirstHeartbeatRenews() {
    assertTrue(settings(30_000, 3_000).renewDue(-1));
  }

  @Test
  void atTheDefaultsEveryThirdHeartbeatRenews() {
    assertEquals(List.of(0L, 9_000L, 18_000L, 27_000L, 36_000L, 45_000L, 54_000L), renewals(settings(30_000, 3_000), 60_000));
    assertFalse(settings(30_000, 3_000).renewDue(6_000));
    assertTrue(settings(30_000, 3_000).renewDue(9_000));
  }

  @Test
  void aLeaseNeverHasLessThanTwoThirdsOfItsTtlLeftAtAHeartbeat() {
    for (long ttl : new long[] {2_000, 5_000, 15_000, 30_000, 60_000}) {
      for (long hb : new long[] {100, 250, 1_000, 3_000, 7_000}) {
        if (hb > ttl / 3) continue; // a heartbeat slower than a third of the TTL renews every time (below)
        LeaseKeeper.Settings s = settings(ttl, hb);
        List<Long> at = renewals(s, 10 * ttl);
        for (int i = 1; i < at.size(); i++) {
          long gap = at.get(i) - at.get(i - 1);
          assertTrue(gap <= ttl / 3, "ttl " + ttl + " heartbeat " + hb + ": renewals " + gap + " ms apart");
        }
        assertTrue(at.size() >= 10 * ttl / (ttl / 3) - 1, "ttl " + ttl + " heartbeat " + hb + ": only " + at.size() + " renewals");
      }
    }
  }

  @Test
  void aHeartbeatSlowerThanAThirdOfTheTtlRenewsEveryTime() {
    LeaseKeeper.Settings s = settings(3_000, 2_000);
    assertEquals(List.of(0L, 2_000L, 4_000L, 6_000L), renewals(s, 6_000));
  }
}
