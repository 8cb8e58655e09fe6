package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.Priority;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BatchPickerTest {
  /** A clock the test moves by hand. */
  static final class FakeClock extends Clock {
    private long now = 1_000_000;

    void advance(long ms) {
      now += ms;
    }

    @Override
    public long millis() {
      return now;
    }

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(now);
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }
  }

  private final FakeClock clock = new FakeClock();
  private final BatchPicker<String> picker = new BatchPicker<>(8, 200, clock);

  private void add(Priority p, String prefix, int n) {
    for (int i = 0; i < n; i++) picker.add(p, prefix + i);
  }

  private static long count(List<String> batch, String prefix) {
    return batch.stream().filter(d -> d.startsWith(prefix)).count();
  }

  @Test
  void highPriorityFillsThreeQuartersAndNormalTheRest() {
    add(Priority.HIGH, "h", 20);
    add(Priority.NORMAL, "n", 20);
    List<String> batch = picker.take();
    assertEquals(8, batch.size());
    assertEquals(6, count(batch, "h"), "high takes three quarters of the batch");
    assertEquals(2, count(batch, "n"), "normal still gets its quarter");
    assertEquals(List.of("h0", "h1", "h2", "h3", "h4", "h5", "n0", "n1"), batch, "each queue in arrival order");
  }

  @Test
  void eachPriorityTakesTheShareTheOtherLeavesUnused() {
    assertEquals(Map.of("h", 7L, "n", 1L), shares(20, 1), "high takes the normal share nobody needs");
    assertEquals(Map.of("h", 1L, "n", 7L), shares(1, 20), "normal takes the high share nobody needs");
  }

  /** The make-up of the first batch out of a mailbox with {@code high} and {@code normal} deliveries. */
  private Map<String, Long> shares(int highCount, int normalCount) {
    picker.clear();
    add(Priority.HIGH, "h", highCount);
    add(Priority.NORMAL, "n", normalCount);
    List<String> batch = picker.take();
    return Map.of("h", count(batch, "h"), "n", count(batch, "n"));
  }

  @Test
  void aNormalMessageWaitingOverAMinuteGoesFirstAheadOfHighPriority() {
    add(Priority.NORMAL, "n", 10);
    clock.advance(BatchPicker.STARVATION_MS + 1);
    add(Priority.HIGH, "h", 10);
    List<String> batch = picker.take();
    assertEquals(8, count(batch, "n"), "starving normal messages fill the batch");
    assertEquals(List.of("n8", "n9", "h0", "h1", "h2", "h3", "h4", "h5"), picker.take(), "the rest of them next, then high");
  }

  @Test
  void aNormalMessageWaitingExactlyAMinuteIsNotYetStarving() {
    add(Priority.NORMAL, "n", 10);
    clock.advance(BatchPicker.STARVATION_MS);
    add(Priority.HIGH, "h", 10);
    assertEquals(6, count(picker.take(), "h"));
  }

  @Test
  void aSmallBatchLingersUntilItsOldestDeliveryWaitedTheLingerTime() {
    add(Priority.NORMAL, "n", 1);
    assertEquals(200, picker.dueInMs(false), "nothing is due before the linger");
    clock.advance(150);
    add(Priority.HIGH, "h", 1);
    assertEquals(50, picker.dueInMs(false), "the linger counts from the oldest delivery");
    clock.advance(50);
    assertEquals(0, picker.dueInMs(false), "due once the oldest waited the linger time");
    assertEquals(List.of("h0", "n0"), picker.take());
  }

  @Test
  void aFullMailboxIsDueAtOnce() {
    add(Priority.NORMAL, "n", 7);
    assertTrue(picker.dueInMs(false) > 0);
    add(Priority.NORMAL, "n", 1);
    assertEquals(0, picker.dueInMs(false), "batchMax deliveries do not wait for the linger");
  }

  @Test
  void flushingMakesAnythingDueAtOnce() {
    add(Priority.NORMAL, "n", 1);
    assertEquals(0, picker.dueInMs(true));
  }

  @Test
  void aBatchNeverExceedsBatchMaxAndTheRestStays() {
    add(Priority.NORMAL, "n", 19);
    assertEquals(8, picker.take().size());
    assertEquals(8, picker.take().size());
    assertEquals(3, picker.size());
    assertEquals(List.of("n16", "n17", "n18"), picker.take());
  }

  @Test
  void anEmptyMailboxIsNeverDueAndYieldsAnEmptyBatch() {
    assertEquals(-1, picker.dueInMs(false));
    assertEquals(-1, picker.dueInMs(true));
    assertTrue(picker.take().isEmpty());
    add(Priority.HIGH, "h", 3);
    picker.clear();
    assertTrue(picker.isEmpty());
    assertEquals(-1, picker.dueInMs(false));
  }
}
