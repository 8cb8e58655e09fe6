package dev.inspection.worker;

import static dev.inspection.worker.PoisonSplitTest.devices;
import static dev.inspection.worker.PoisonSplitTest.part;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.common.RetryPolicy;
import dev.inspection.metrics.Metrics;
import dev.inspection.worker.BatchStore.Committed;
import dev.inspection.worker.BatchStore.Fenced;
import dev.inspection.worker.BatchStore.Outcome;
import dev.inspection.worker.BatchStore.Part;
import dev.inspection.worker.CommitGroup.SlotCommit;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.ClosedConnectionException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The split's I/O loop against a store that behaves like PostgreSQL with a constraint on some devices (the real one: PoisonIT). */
class PoisonSplitterTest {
  /** A transaction: all or nothing; refused when it holds a refused device of a slot it still owns; a fenced slot writes nothing. */
  static final class FakeStore implements PoisonSplitter.Store {
    final Set<String> refuse = new HashSet<>();
    final Set<Integer> fenced = new HashSet<>();
    final Queue<Throwable> failNext = new ArrayDeque<>();
    final List<Set<String>> commits = new ArrayList<>();
    final List<String> written = new ArrayList<>();

    @Override
    public Future<Map<Integer, Outcome>> commit(List<Part> parts) {
      Set<String> devices = new HashSet<>();
      for (Part p : parts) devices.addAll(PoisonSplit.devices(p.plan()));
      commits.add(devices);
      if (!failNext.isEmpty()) return Future.failedFuture(failNext.poll());
      Map<Integer, Outcome> out = new HashMap<>();
      List<String> tx = new ArrayList<>();
      for (Part p : parts) {
        if (fenced.contains(p.slot())) {
          out.put(p.slot(), new Fenced("someone-else", p.epoch() + 1));
          continue;
        }
        for (String d : PoisonSplit.devices(p.plan())) {
          if (refuse.contains(d)) {
            return Future.failedFuture(new PgException("new row violates check constraint \"no_" + d + "\"", "ERROR", "23514", null));
          }
          tx.add(d);
        }
      }
      written.addAll(tx);
      Committed c = new Committed(tx.size(), tx.size());
      for (Part p : parts) out.putIfAbsent(p.slot(), c);
      return Future.succeededFuture(out);
    }
  }

  private final Vertx vertx = Vertx.vertx();
  private final Metrics metrics = Metrics.prometheus();
  private final FakeStore store = new FakeStore();

  @AfterEach
  void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private PoisonSplitter splitter(int retries, int maxSplitCommits) {
    return new PoisonSplitter(vertx, store, new PoisonSplitter.Settings(retries, maxSplitCommits, new RetryPolicy(1, 5)), metrics);
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static List<Part> threeSlots() {
    return List.of(part(1, devices("a", 8), 2), part(2, devices("b", 8), 2), part(3, devices("c", 8), 2));
  }

  @Test
  void aGroupThatCommitsIsOneTransactionAndNoSplit() throws Exception {
    Map<Integer, SlotCommit> r = await(splitter(3, 64).commit(threeSlots()));
    assertEquals(1, store.commits.size());
    for (int slot = 1; slot <= 3; slot++) assertEquals(Map.of(), r.get(slot).refused());
    assertEquals(0, metrics.count("worker_poison_splits_total"));
  }

  @Test
  void oneRefusedDeviceIsLeftOutAloneAndEveryOtherDeviceOfItsSlotAndOfTheGroupIsWrittenOnce() throws Exception {
    store.refuse.add("b5");
    Map<Integer, SlotCommit> r = await(splitter(3, 64).commit(threeSlots()));

    assertEquals(Set.of("b5"), r.get(2).refused().keySet());
    assertEquals("23514", r.get(2).refused().get("b5").sqlState());
    assertInstanceOf(Committed.class, r.get(2).outcome());
    assertEquals(Map.of(), r.get(1).refused());
    assertEquals(Map.of(), r.get(3).refused());
    assertInstanceOf(Committed.class, r.get(1).outcome());
    assertInstanceOf(Committed.class, r.get(3).outcome());

    List<String> expected = new ArrayList<>();
    for (String p : List.of("a", "b", "c")) expected.addAll(devices(p, 8));
    expected.remove("b5");
    assertEquals(Set.copyOf(expected), Set.copyOf(store.written));
    assertEquals(expected.size(), store.written.size(), "nothing written twice");
    // group, then by slot: {1} {2,3} -> {2} {3} ; then slot 2's devices: 4+4 -> 2+2 -> 1+1
    int splits = store.commits.size() - 1;
    assertEquals(splits, (int) metrics.count("worker_poison_splits_total"));
    assertTrue(splits <= 2 * 2 + 2 * 3, "halving, not one commit per device: " + splits);
    assertEquals(1, metrics.count("worker_db_rejected_total", "sqlstate", "23514"));
    assertTrue(store.commits.stream().filter(c -> c.size() == 1).anyMatch(c -> c.contains("b5")), "the culprit was tried alone");
  }

  @Test
  void refusedDevicesInTwoSlotsAreEachFoundAndTheirSlotsOtherDevicesCommit() throws Exception {
    store.refuse.addAll(Set.of("a0", "c7"));
    Map<Integer, SlotCommit> r = await(splitter(3, 64).commit(threeSlots()));
    assertEquals(Set.of("a0"), r.get(1).refused().keySet());
    assertEquals(Set.of(), r.get(2).refused().keySet());
    assertEquals(Set.of("c7"), r.get(3).refused().keySet());
    assertEquals(22, store.written.size());
  }

  @Test
  void aSlotWhoseEveryDeviceIsRefusedCommitsNothingAndStaysOwned() throws Exception {
    store.refuse.add("only");
    Map<Integer, SlotCommit> r = await(splitter(3, 64).commit(List.of(part(1, devices("a", 2), 1), part(9, List.of("only"), 1))));
    assertEquals(new Committed(0, 0), r.get(9).outcome());
    assertEquals(Set.of("only"), r.get(9).refused().keySet());
    assertEquals(Set.of("a0", "a1"), Set.copyOf(store.written));
  }

  @Test
  void everySplitCommitChecksTheLeaseAndASlotThatMovedIsFencedNotRefused() throws Exception {
    store.refuse.add("a3");
    store.fenced.add(1); // slot 1 moved: its refused device is the new owner's business
    store.refuse.add("b2");
    Map<Integer, SlotCommit> r = await(splitter(3, 64).commit(threeSlots()));
    assertInstanceOf(Fenced.class, r.get(1).outcome());
    assertEquals(Map.of(), r.get(1).refused());
    assertEquals(Set.of("b2"), r.get(2).refused().keySet());
    assertTrue(store.written.stream().noneMatch(d -> d.startsWith("a")));
  }

  @Test
  void anOutageIsNotSplitAndFailsTheGroup() {
    store.failNext.add(ClosedConnectionException.INSTANCE);
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, () -> await(splitter(3, 64).commit(threeSlots())));
    assertSame(ClosedConnectionException.INSTANCE, e.getCause());
    assertEquals(1, store.commits.size());
    assertEquals(0, metrics.count("worker_poison_splits_total"));
  }

  @Test
  void anOutageInTheMiddleOfASplitFailsTheGroup() {
    store.refuse.add("c1");
    store.failNext.add(new PgException("new row violates check constraint", "ERROR", "23514", null));
    store.failNext.add(new PgException("terminating connection due to administrator command", "FATAL", "57P01", null));
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, () -> await(splitter(3, 64).commit(threeSlots())));
    assertEquals("57P01", ((PgException) e.getCause()).getSqlState());
  }

  @Test
  void aDeadlockIsTriedAgainAndThenCommitsWithoutASplit() throws Exception {
    store.failNext.add(new PgException("deadlock detected", "ERROR", "40P01", null));
    store.failNext.add(new PgException("could not serialize access", "ERROR", "40001", null));
    Map<Integer, SlotCommit> r = await(splitter(3, 64).commit(threeSlots()));
    assertInstanceOf(Committed.class, r.get(2).outcome());
    assertEquals(3, store.commits.size());
    assertEquals(2, metrics.count("worker_db_retries_total"));
    assertEquals(0, metrics.count("worker_poison_splits_total"));
  }

  @Test
  void aLockTimeoutOfTheHistoryStatementIsNotTriedAgainButAnyOtherLockTimeoutIs() throws Exception {
    PgException timeout = new PgException("canceling statement due to lock timeout", "ERROR", "55P03", null);
    store.failNext.add(new BatchStore.HistoryLocked(2000, timeout));
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, () -> await(splitter(3, 64).commit(threeSlots())));
    assertTrue(BatchStore.historyLocked(e.getCause()), String.valueOf(e.getCause()));
    assertEquals(1, store.commits.size(), "failed at once: the group goes again without its history rows (CommitGroup), not after backoffs");
    assertEquals(0, metrics.count("worker_db_retries_total"));

    store.failNext.add(timeout); // e.g. the lease check behind a leader's bump
    Map<Integer, SlotCommit> r = await(splitter(3, 64).commit(threeSlots()));
    assertInstanceOf(Committed.class, r.get(2).outcome());
    assertEquals(1, metrics.count("worker_db_retries_total"));
  }

  @Test
  void retriesUsedUpFailTheGroupLikeAnOutage() {
    for (int i = 0; i < 3; i++) store.failNext.add(new PgException("deadlock detected", "ERROR", "40P01", null));
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, () -> await(splitter(2, 64).commit(threeSlots())));
    assertEquals("40P01", ((PgException) e.getCause()).getSqlState());
    assertEquals(3, store.commits.size(), "the first attempt and two retries");
  }

  @Test
  void aSplitThatRunsOutOfCommitsRequeuesInsteadOfDeadLetteringEverything() {
    for (String p : List.of("a", "b", "c")) store.refuse.addAll(devices(p, 8));
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, () -> await(splitter(3, 10).commit(threeSlots())));
    assertTrue(e.getCause().getMessage().contains("worker.poison.max.split.commits"), e.getCause().getMessage());
    assertEquals(10, metrics.count("worker_poison_splits_total"));
    assertEquals(11, store.commits.size());
  }
}
