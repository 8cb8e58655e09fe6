package dev.inspection.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class MetricsTest {
  /** A sample of {@code name} with all these labels and this value ({@code null}: any value). */
  private static boolean hasLine(String scrape, String name, String value, String... labels) {
    return scrape.lines().anyMatch(l -> {
      if (!l.startsWith(name + "{") || (value != null && !l.endsWith(" " + value))) return false;
      for (String label : labels) if (!l.contains(label)) return false;
      return true;
    });
  }

  @Test
  void everyMeterCarriesTheNodeAndRoleTags() {
    Metrics m = Metrics.prometheus("w-7", "worker");
    m.publishNacked(2);
    String scrape = m.scrape();
    assertTrue(hasLine(scrape, "outbox_nacks_total", "2.0", "node=\"w-7\"", "role=\"worker\""), scrape);
    assertTrue(hasLine(scrape, "jvm_threads_live_threads", null, "node=\"w-7\"", "role=\"worker\""), "JVM binders on the node's registry");
    m.close();
  }

  @Test
  void aRefusedPublishIsStampedWithItsOwnTime() {
    // the probe's own mode counts a refused publish within probe.mode.nack.window.ms of when it happened, not of the look
    // that first saw the counter grow (which held the mode while any publish was refused between two looks)
    Metrics m = Metrics.prometheus("p-1", "probe");
    assertEquals(-1, m.lastNackAtMs(), "never refused");
    long before = System.currentTimeMillis();
    m.publishNacked(3);
    long after = System.currentTimeMillis();
    assertTrue(m.lastNackAtMs() >= before && m.lastNackAtMs() <= after, "stamped when refused: " + m.lastNackAtMs());
  }

  @Test
  void latenciesArePublishedAsNodePercentilesAndAsAggregatableBuckets() {
    Metrics m = Metrics.prometheus("w-1", "worker");
    m.batch(10, 40_000_000L, System.currentTimeMillis()); // 40 ms
    m.lagMillis(1, 3_000);
    String scrape = m.scrape();
    assertTrue(hasLine(scrape, "worker_commit_latency_seconds", null, "quantile=\"0.99\""), "the per-node p99 the scripts read: " + scrape);
    assertTrue(hasLine(scrape, "worker_commit_latency_histogram_seconds_bucket", "1", "le=\"0.05\""), "40 ms falls in the 50 ms bucket");
    assertTrue(hasLine(scrape, "worker_commit_latency_histogram_seconds_bucket", "0", "le=\"0.025\""), "and not in the 25 ms one");
    assertTrue(hasLine(scrape, "worker_priority_lag_seconds_bucket", "1", "priority=\"high\"", "le=\"5.0\""), "lag by priority");
    assertTrue(hasLine(scrape, "worker_priority_lag_seconds_bucket", "0", "priority=\"normal\"", "le=\"5.0\""), "only the high lane got it");
    assertTrue(m.commitLatency().p99Ms() >= 30 && m.commitLatency().p99Ms() <= 50, "the heartbeat's p99 still reads the percentiles: " + m.commitLatency().p99Ms());
    m.close();
  }

  @Test
  void theHeartbeatsCommitP99ForgetsAnOverloadAfterItsWindowWhileTheExportedOneKeepsTwoMinutes() {
    Metrics m = Metrics.prometheus("w-1", "worker");
    assertEquals(-1, m.commitLatency().recentP99Ms(0), "no commit yet");
    m.commitLatency().windowMs(30_000);
    long t0 = System.currentTimeMillis();
    for (int i = 0; i < 200; i++) m.batch(40, 40_000_000_000L, t0 + i * 50L); // the backlog's batches, 40 s after they were due, for 10 s
    assertEquals(40_000, m.commitLatency().recentP99Ms(t0 + 10_000), "overloaded: the waiting batches");
    long t1 = t0 + 10_000;
    for (int i = 0; i < 200; i++) m.batch(40, 20_000_000L, t1 + i * 100L); // drained: 20 ms each for 20 s
    assertEquals(40_000, m.commitLatency().recentP99Ms(t1 + 19_999), "the backlog's batches are still within 30 s: a third of the window");
    assertEquals(20, m.commitLatency().recentP99Ms(t0 + 10_000 + 30_001), "30 s after the last waiting batch only the fast ones remain");
    assertTrue(m.commitLatency().p99Ms() > 30_000, "/metrics (and the bench, the drills) keep the two-minute percentiles: " + m.commitLatency().p99Ms());
    assertEquals(0, m.commitLatency().recentP99Ms(t1 + 20_000 + 30_001), "nothing committed in the window: no latency to report");
    m.close();
  }

  @Test
  void aSlotThatMovedAwayLeavesNoLagOrBacklogSeries() {
    Metrics m = Metrics.prometheus("w-1", "all");
    m.slots().lag(Map.of(3, 1500L, 4, 200L));
    m.slots().backlog(Map.of(3, Map.of("high", 7L, "low", 0L)));
    String before = m.scrape();
    assertTrue(hasLine(before, "worker_slot_lag_seconds", "1.5", "slot=\"3\""), before);
    assertTrue(hasLine(before, "queue_backlog_messages", "7.0", "slot=\"3\"", "priority=\"high\""), before);
    m.slots().lag(Map.of(4, 250L));
    String after = m.scrape();
    assertFalse(after.contains("worker_slot_lag_seconds{node=\"w-1\",role=\"all\",slot=\"3\"}"), after);
    assertTrue(hasLine(after, "worker_slot_lag_seconds", "0.25", "slot=\"4\""), after);
    m.close();
  }

  @Test
  void theDeadLetterGaugeAppearsWithTheFirstSampleOnly() {
    Metrics m = Metrics.prometheus("p-1", "probe");
    assertFalse(m.scrape().contains("dead_letter_queue_messages"), "a node that samples no queues has no such gauge");
    m.slots().deadLetters(4);
    assertTrue(hasLine(m.scrape(), "dead_letter_queue_messages", "4.0"), m.scrape());
    m.close();
  }
}
