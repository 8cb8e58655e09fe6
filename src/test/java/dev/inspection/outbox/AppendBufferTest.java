package dev.inspection.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.Priority;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class AppendBufferTest {
  private static CheckResult r(String device, Priority p, int i) {
    return new CheckResult(device, 0, p, Instant.ofEpochMilli(i), 0, 1, 1, new JsonObject().put("i", i));
  }

  private static List<String> ids(List<CheckResult> rs) {
    return rs.stream().map(x -> x.deviceId() + "#" + x.payload().getInteger("i")).toList();
  }

  @Test
  void aBacklogGivesCriticalResultsTheFirstPlacesKeepingEachPrioritysOrder() {
    AppendBuffer b = new AppendBuffer();
    for (int i = 0; i < 10; i++) b.add(r("n" + (i % 2), Priority.NORMAL, i));
    b.add(r("c", Priority.HIGH, 10));
    b.add(r("l", Priority.LOW, 11));
    b.add(r("c", Priority.HIGH, 12));
    assertEquals(13, b.size());
    assertEquals(List.of("c#10", "c#12", "n0#0", "n1#1"), ids(b.take(4)), "critical first, in check order, then the oldest others");
    assertEquals(9, b.size());
    List<CheckResult> rest = new ArrayList<>();
    while (!b.isEmpty()) rest.addAll(b.take(4));
    assertEquals(List.of("n0#2", "n1#3", "n0#4", "n1#5", "n0#6", "n1#7", "n0#8", "n1#9", "l#11"), ids(rest), "nothing lost, each device in check order");
  }

  @Test
  void moreCriticalResultsThanOneCommitTakeTheirOrderAcrossCommits() {
    AppendBuffer b = new AppendBuffer();
    for (int i = 0; i < 5; i++) b.add(r("c", Priority.HIGH, i));
    b.add(r("n", Priority.NORMAL, 5));
    assertEquals(List.of("c#0", "c#1", "c#2"), ids(b.take(3)));
    assertEquals(List.of("c#3", "c#4", "n#5"), ids(b.take(3)));
    assertTrue(b.take(3).isEmpty());
  }

  @Test
  void clearDropsEverything() {
    AppendBuffer b = new AppendBuffer();
    b.add(r("c", Priority.HIGH, 0));
    b.add(r("n", Priority.NORMAL, 1));
    b.clear();
    assertEquals(0, b.size());
    assertTrue(b.isEmpty());
  }

  @Test
  void aPushedResultIsAnsweredWithItsRowOnlyWhenItsCommitSucceededAndFailedOtherwise() {
    AppendBuffer b = new AppendBuffer();
    CheckResult polled = r("n", Priority.NORMAL, 0);
    CheckResult pushed = r("room", Priority.NORMAL, 1);
    CheckResult late = r("room", Priority.NORMAL, 2);
    Promise<OutboxRow> p1 = Promise.promise();
    Promise<OutboxRow> p2 = Promise.promise();
    b.add(polled);
    b.add(pushed, p1);
    List<CheckResult> batch = b.take(10);
    b.add(late, p2);
    assertFalse(p1.future().isComplete(), "not before the commit");
    OutboxRow r0 = new OutboxRow(1, "p:1:n:1", "rk", new byte[0], 0);
    OutboxRow r1 = new OutboxRow(2, "p:1:room:7", "rk", new byte[0], 0);
    b.durable(batch, List.of(r0, r1));
    assertEquals(r1, p1.future().result(), "the row of that very result");
    assertFalse(p2.future().isComplete(), "a result of the next commit still waits");
    b.failed(b.take(10), new IllegalStateException("disk full"));
    assertEquals("disk full", p2.future().cause().getMessage());
  }

  @Test
  void clearTellsEveryWaitingPushThatItWasNotStored() {
    AppendBuffer b = new AppendBuffer();
    Promise<OutboxRow> p = Promise.promise();
    b.add(r("room", Priority.NORMAL, 0), p);
    b.clear();
    assertTrue(p.future().failed());
    assertTrue(p.future().cause().getMessage().contains("not stored"), p.future().cause().getMessage());
  }
}
