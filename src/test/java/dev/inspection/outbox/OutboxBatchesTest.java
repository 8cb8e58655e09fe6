package dev.inspection.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class OutboxBatchesTest {
  private static OutboxRow row(long id, String key, int bytes) {
    return new OutboxRow(id, "m" + id, key, new byte[bytes], id);
  }

  private static List<List<Long>> ids(List<List<OutboxRow>> messages) {
    return messages.stream().map(m -> m.stream().map(OutboxRow::id).toList()).toList();
  }

  @Test
  void rowsOfOneKeyTravelTogetherInIdOrder() {
    List<OutboxRow> rows = List.of(row(1, "slot.1.normal", 10), row(2, "slot.2.normal", 10), row(3, "slot.1.normal", 10),
        row(4, "slot.1.high", 10), row(5, "slot.2.normal", 10));
    assertEquals(List.of(List.of(1L, 3L), List.of(2L, 5L), List.of(4L)), ids(OutboxBatches.split(rows, 100, 1 << 20)));
  }

  @Test
  void aLoneRowIsAMessageOfItsOwn() {
    assertEquals(List.of(List.of(7L)), ids(OutboxBatches.split(List.of(row(7, "slot.0.normal", 300)), 100, 1 << 20)));
  }

  @Test
  void runsAreCutByCountAndByBytesAndKeepTheirOrder() {
    List<OutboxRow> rows = new ArrayList<>();
    for (long i = 1; i <= 7; i++) rows.add(row(i, "k", 100));
    assertEquals(List.of(List.of(1L, 2L, 3L), List.of(4L, 5L, 6L), List.of(7L)), ids(OutboxBatches.split(rows, 3, 1 << 20)));
    // 100 bytes + a comma each: two fit in 250 bytes
    assertEquals(List.of(List.of(1L, 2L), List.of(3L, 4L), List.of(5L, 6L), List.of(7L)), ids(OutboxBatches.split(rows, 100, 250)));
  }

  @Test
  void aRowLargerThanTheByteLimitGoesAlone() {
    List<OutboxRow> rows = List.of(row(1, "k", 10), row(2, "k", 5000), row(3, "k", 10));
    assertEquals(List.of(List.of(1L), List.of(2L), List.of(3L)), ids(OutboxBatches.split(rows, 100, 1000)));
  }

  @Test
  void batchingOffIsOneMessagePerRow() {
    List<OutboxRow> rows = List.of(row(1, "k", 10), row(2, "k", 10));
    assertEquals(List.of(List.of(1L), List.of(2L)), ids(OutboxBatches.split(rows, 1, 1 << 20)));
  }
}
