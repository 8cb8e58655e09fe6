package dev.inspection.messaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class QueueBudgetTest {

  @Test
  void defaultBudgetGivesEachHighQueueFourSharesAndNeverExceedsTheTotal() {
    QueueBudget b = QueueBudget.of(Config.of(Map.of()));
    assertEquals(8L << 30, b.totalBytes());
    long normal = b.bytes(Priority.NORMAL);
    long high = b.bytes(Priority.HIGH);
    assertEquals(4 * normal, high);
    assertEquals(6_710_886, normal); // 8 GiB / (256 slots x 5 shares)
    assertTrue(256 * (normal + high) <= b.totalBytes());
  }

  @Test
  void theSplitFollowsTheSlotCountAndWeight() {
    QueueBudget b = new QueueBudget(1_000_000, 3, 10);
    assertEquals(25_000, b.bytes(Priority.NORMAL));
    assertEquals(75_000, b.bytes(Priority.HIGH));
  }

  @Test
  void uniformGivesEveryQueueTheSameLimit() {
    QueueBudget b = QueueBudget.uniform(20_000, 2);
    assertEquals(20_000, b.bytes(Priority.NORMAL));
    assertEquals(20_000, b.bytes(Priority.HIGH));
  }

  @Test
  void aBudgetTooSmallForTheSlotsStopsStartUpNamingTheKey() {
    ConfigException e = assertThrows(ConfigException.class,
        () -> QueueBudget.of(Config.of(Map.of("broker.queue.budget.bytes", "1000000", "slots.total", "256"))));
    assertTrue(e.getMessage().contains("broker.queue.budget.bytes"), e.getMessage());
    assertThrows(ConfigException.class, () -> QueueBudget.of(Config.of(Map.of("broker.queue.high.weight", "0"))));
  }

  @Test
  void aQueueSmallerThanOneBatchMessageStopsStartUpNamingBothKeys() {
    // 256 slots x (4 + 1) shares x 100 KiB: a normal queue gets 100 KiB, below the 256 KiB batch default
    ConfigException e = assertThrows(ConfigException.class,
        () -> QueueBudget.of(Config.of(Map.of("broker.queue.budget.bytes", String.valueOf(256L * 5 * 102_400)))));
    assertTrue(e.getMessage().contains("broker.queue.budget.bytes") && e.getMessage().contains("outbox.publish.batch.bytes"), e.getMessage());
    assertTrue(e.getMessage().contains("give at least " + 256L * 5 * 262_144), e.getMessage());
    QueueBudget.of(Config.of(Map.of("broker.queue.budget.bytes", String.valueOf(256L * 5 * 102_400), "outbox.publish.batch.bytes", "65536")));
    ConfigException low = assertThrows(ConfigException.class, () -> QueueBudget.of(Config.of(Map.of("queue.low.max.bytes", "100000"))));
    assertTrue(low.getMessage().startsWith("queue.low.max.bytes=100000 is less than one batch message"), low.getMessage());
  }

  @Test
  void theFormerPerQueueKeyIsRefusedWithAPointerToTheBudget() {
    ConfigException e = assertThrows(ConfigException.class, () -> Config.of(Map.of("queue.max.bytes", "67108864")));
    assertTrue(e.getMessage().contains("broker.queue.budget.bytes"), e.getMessage());
  }
}
