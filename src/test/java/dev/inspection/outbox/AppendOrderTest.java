package dev.inspection.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.inspection.messaging.Priority;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class AppendOrderTest {
  private static CheckResult r(String device, Priority p, int i) {
    return new CheckResult(device, 0, p, Instant.ofEpochMilli(i), 0, 1, 1, new JsonObject().put("i", i));
  }

  private static List<String> ids(List<CheckResult> rs) {
    return rs.stream().map(x -> x.deviceId() + "#" + x.payload().getInteger("i")).toList();
  }

  @Test
  void aBufferThatFitsGoesInCheckOrder() {
    List<CheckResult> buffer = new ArrayList<>(List.of(r("n", Priority.NORMAL, 1), r("c", Priority.HIGH, 2), r("l", Priority.LOW, 3)));
    assertEquals(List.of("n#1", "c#2", "l#3"), ids(AppendOrder.take(buffer, 3)));
    assertEquals(0, buffer.size());
  }

  @Test
  void aBacklogGivesCriticalResultsTheFirstPlacesKeepingEachPrioritysOrder() {
    List<CheckResult> buffer = new ArrayList<>();
    for (int i = 0; i < 10; i++) buffer.add(r("n" + (i % 2), Priority.NORMAL, i));
    buffer.add(r("c", Priority.HIGH, 10));
    buffer.add(r("n0", Priority.NORMAL, 11));
    buffer.add(r("c", Priority.HIGH, 12));
    List<CheckResult> first = AppendOrder.take(buffer, 4);
    assertEquals(List.of("c#10", "c#12", "n0#0", "n1#1"), ids(first), "critical first, in check order, then the oldest normal ones");
    assertEquals(9, buffer.size());
    assertEquals("n0#2", ids(buffer).get(0), "the rest waits in check order");
    List<CheckResult> rest = new ArrayList<>();
    while (!buffer.isEmpty()) rest.addAll(AppendOrder.take(buffer, 4));
    assertEquals(List.of("n0#2", "n1#3", "n0#4", "n1#5", "n0#6", "n1#7", "n0#8", "n1#9", "n0#11"), ids(rest), "nothing lost or reordered");
  }

  @Test
  void moreCriticalResultsThanOneCommitTakeTheirOrderAcrossCommits() {
    List<CheckResult> buffer = new ArrayList<>();
    for (int i = 0; i < 5; i++) buffer.add(r("c", Priority.HIGH, i));
    buffer.add(r("n", Priority.NORMAL, 5));
    assertEquals(List.of("c#0", "c#1", "c#2"), ids(AppendOrder.take(buffer, 3)));
    assertEquals(List.of("c#3", "c#4", "n#5"), ids(AppendOrder.take(buffer, 3)));
  }
}
