package dev.inspection.worker;

import static dev.inspection.it.TestEnv.awaitResult;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.control.SlotState;
import dev.inspection.control.WorkerState;
import dev.inspection.it.TestEnv;
import dev.inspection.state.AlertRules;
import dev.inspection.state.Check;
import dev.inspection.state.DerivedJson;
import dev.inspection.state.DerivedState;
import dev.inspection.state.SnapshotLayout;
import dev.inspection.state.DeviceFold;
import dev.inspection.store.Db;
import dev.inspection.store.Migrations;
import dev.inspection.store.PgOptions;
import dev.inspection.worker.LeaseReconciler.Lease;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * A takeover's slots consume one by one as their own devices are in, not all at once when the last page of the last slot
 * is (a survivor taking 256 slots of a million devices waited 30–37 s before any consumed): {@link SnapshotLoader} hands
 * each slot over with its page, and {@link HeldSlots} activates and consumes what it is handed while the rest still load;
 * a load that fails part-way drops only the slots it had not handed over.
 */
class TakeoverWalkIT {

  @Test
  void theLoaderHandsEachSlotOverOnThePageThatFinishesItWithAllItsDevices() throws Exception {
    try (TestEnv env = new TestEnv(6); Schema db = Schema.open(env)) {
      // slot 1: three devices, slot 2: one, slot 3: none, slot 4: four, slot 5: none; pages of two rows
      threeSlots(env);
      env.execute("UPDATE $S.slot_lease SET slot_map_version = 7 WHERE slot_id = 4");
      List<List<Integer>> groups = new CopyOnWriteArrayList<>();
      Map<Integer, Integer> sizeWhenHanded = new TreeMap<>();
      List<SnapshotLoader.Snapshot> handed = new CopyOnWriteArrayList<>();
      awaitResult(new SnapshotLoader(db.pool(), 2).load(List.of(5, 4, 3, 2, 1), snaps -> {
        groups.add(snaps.stream().map(SnapshotLoader.Snapshot::slot).toList());
        snaps.forEach(s -> sizeWhenHanded.put(s.slot(), s.snapshots().size()));
        handed.addAll(snaps);
      }));
      // page 2 (c, d) finishes slot 1; page 3 (e, f) finishes 2 and the empty 3; the short last page finishes 4 and 5
      assertEquals(List.of(List.of(1), List.of(2, 3), List.of(4, 5)), groups, "slots handed over in order, each with the page that finished it");
      assertEquals(Map.of(1, 3, 2, 1, 3, 0, 4, 4, 5, 0), sizeWhenHanded, "every device of a slot is in when it is handed over");
      for (SnapshotLoader.Snapshot s : handed) {
        assertEquals(sizeWhenHanded.get(s.slot()), s.snapshots().size(), "slot " + s.slot() + ": nothing added after its hand-over");
        assertEquals(sizeWhenHanded.get(s.slot()), s.devices(), "slot " + s.slot() + ": every device read has its snapshot");
        assertEquals(s.slot() == 4 ? 7 : 1, s.mapVersion(), "slot " + s.slot() + "'s map version");
        assertTrue(s.waitedMillis() >= 0 && s.waitedMillis() <= s.millis(), "slot " + s.slot() + " waited for its pages within its own load: " + s);
      }
      // the pages that held each slot's devices: 1 on pages 1-2, 2 on 2-3, 4 on 3-5 (the empty last page ends it); an empty
      // slot counts the page it was finished on
      Map<Integer, Integer> pages = new TreeMap<>();
      handed.forEach(s -> pages.put(s.slot(), s.pages()));
      assertEquals(Map.of(1, 2, 2, 2, 3, 1, 4, 3, 5, 1), pages);
      assertEquals(List.of("e", "f", "g", "h"), handed.get(3).snapshots().keySet().stream().sorted().toList());
      assertEquals(List.of("e", "f", "g", "h"), handed.get(3).states().keySet().stream().sorted().toList(), "each read into its state");
    }
  }

  @Test
  void aPageReadsABoundedNumberOfRowsWhereverItIsInTheWalk() throws Exception {
    try (TestEnv env = new TestEnv(64); Schema db = Schema.open(env)) {
      // 64 slots of 300 devices; the statistics tell PostgreSQL so
      env.execute("INSERT INTO $S.device_status_current (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id,"
          + " status_payload, derived_snapshot) SELECT 'd-' || lpad(g::text, 6, '0'), g % 64, g % 64, 1, 1, now(), 1, 'm-' || g, '{}', NULL"
          + " FROM generate_series(0, 19199) g");
      env.execute("ANALYZE $S.device_status_current");
      int page = 100;
      Short[] all = new Short[64];
      for (short s = 0; s < 64; s++) all[s] = s;
      // where a walk of all 64 slots starts, half way through it, and with the last three slots to go
      for (int at : new int[] {-1, 31, 60}) {
        Short[] after = java.util.Arrays.stream(all).filter(s -> s > at).toArray(Short[]::new);
        io.vertx.sqlclient.RowSet<io.vertx.sqlclient.Row> plan = awaitResult(db.pool().preparedQuery("EXPLAIN (ANALYZE, FORMAT JSON) " + SnapshotLoader.PAGE)
            .execute(io.vertx.sqlclient.Tuple.of((short) at, "d-009000", after, page)));
        JsonObject root = ((io.vertx.core.json.JsonArray) plan.iterator().next().getValue(0)).getJsonObject(0).getJsonObject("Plan");
        long read = rowsRead(root);
        // at most a page from each half, or the rest of the slot being read when PostgreSQL expects it to be less than a
        // page; before, near a walk's end it expected fewer rows than a page from all the walk's rest, read it all and sorted it
        assertTrue(read <= 2L * page + 300, "a page after slot " + at + " read " + read + " rows of device_status_current: " + root.encode());
        assertEquals(page, root.getLong("Actual Rows"), "a full page after slot " + at);
      }
    }
  }

  /** The rows the plan's scans of device_status_current returned, over all their loops. */
  private static long rowsRead(JsonObject node) {
    long n = "device_status_current".equals(node.getString("Relation Name")) ? node.getLong("Actual Rows") * node.getLong("Actual Loops") : 0;
    io.vertx.core.json.JsonArray children = node.getJsonArray("Plans");
    if (children != null) for (int i = 0; i < children.size(); i++) n += rowsRead(children.getJsonObject(i));
    return n;
  }

  @Test
  void aPageAskedForBeforeTheWalkFailedIsNotRead() throws Exception {
    try (TestEnv env = new TestEnv(6); Schema db = Schema.open(env)) {
      threeSlots(env);
      // one connection, one context: the page asked for while page 2 is read answers before the query sent after the walk
      Pool one = Db.pool(db.vertx(), PgOptions.from(env.config(Map.of())), 1);
      Context ctx = db.vertx().getOrCreateContext();
      List<String> listed = new CopyOnWriteArrayList<>();
      List<Integer> handed = new CopyOnWriteArrayList<>();
      SnapshotLoader loader = new SnapshotLoader(one, 2, (device, priority, profile) -> listed.add(device));
      Promise<Void> walk = Promise.promise();
      ctx.runOnContext(v -> loader.load(List.of(1, 2, 3, 4, 5), snaps -> {
        snaps.forEach(s -> handed.add(s.slot()));
        throw new IllegalStateException("the worker refused slot " + snaps.get(0).slot());
      }).onComplete(walk));
      Throwable failed = assertThrows(ExecutionException.class, () -> awaitResult(walk.future())).getCause();
      assertTrue(failed.getMessage().contains("refused slot 1"), failed.getMessage());
      Promise<Void> after = Promise.promise();
      ctx.runOnContext(v -> one.query("SELECT 1").execute().<Void>mapEmpty().onComplete(after));
      awaitResult(after.future());
      assertEquals(List.of(1), handed, "page 2 finished slot 1 and the walk failed there");
      assertEquals(List.of("a", "b", "c", "d"), listed, "page 3 (e, f) was asked for while page 2 was read, and not read");
      awaitResult(one.close());
    }
  }

  @Test
  void eachSnapshotIsReadFromTheTextPostgreSqlHoldsWhateverItsShape() throws Exception {
    try (TestEnv env = new TestEnv(6); Schema db = Schema.open(env)) {
      DerivedState state = DerivedState.initial();
      Instant t0 = Instant.parse("2026-12-06T01:00:00.123Z");
      for (int i = 0; i < 5; i++) {
        Check c = new Check("x", 1, i + 1, t0.plusSeconds(60L * i), i < 3, new JsonObject().put("latency_ms", 10 + i));
        state = DeviceFold.apply(state, c, AlertRules.forPriority(1)).next();
      }
      String text = SnapshotLayout.V1.encode(state);
      device(env, 1, "written", "jsonb", "corrupt", "none", "compact", "compact-jsonb");
      env.execute("UPDATE $S.device_status_current SET derived_snapshot = $$" + text + "$$ WHERE device_id = 'written'");
      String compact = SnapshotLayout.COMPACT.encode(state);
      env.execute("UPDATE $S.device_status_current SET derived_snapshot = $$" + compact + "$$ WHERE device_id = 'compact'");
      env.execute("UPDATE $S.device_status_current SET derived_snapshot = $$" + compact + "$$::jsonb::json WHERE device_id = 'compact-jsonb'");
      // a snapshot stored as jsonb before V013: PostgreSQL reorders its members and spaces them
      env.execute("UPDATE $S.device_status_current SET derived_snapshot = $$" + text + "$$::jsonb::json WHERE device_id = 'jsonb'");
      env.execute("UPDATE $S.device_status_current SET derived_snapshot = '{\"v\": 1, \"firing\": 3}' WHERE device_id = 'corrupt'");
      env.execute("UPDATE $S.device_status_current SET derived_snapshot = NULL WHERE device_id = 'none'");
      String reordered = (String) env.query("SELECT derived_snapshot::text FROM $S.device_status_current WHERE device_id = 'jsonb'").get(0)[0];
      assertTrue(!reordered.equals(text) && reordered.contains("\": "), "jsonb's text differs from what was written: " + reordered);
      SnapshotLoader.Snapshot slot = awaitResult(new SnapshotLoader(db.pool(), 2).load(1));
      assertEquals(state, slot.states().get("written"));
      assertEquals(state, slot.states().get("jsonb"));
      assertEquals(state, slot.states().get("compact"), "both layouts are read: " + compact);
      assertEquals(state, slot.states().get("compact-jsonb"));
      assertTrue(!slot.states().containsKey("corrupt"), "an unreadable snapshot: the device starts again");
      assertTrue(!slot.states().containsKey("none"), "no snapshot yet");
      assertEquals(4, slot.states().size());
      assertEquals(reordered, slot.snapshots().get("jsonb"), "the text kept as PostgreSQL sent it, read at the device's first result");
      assertEquals(Set.of("written", "jsonb", "corrupt", "compact", "compact-jsonb"), slot.snapshots().keySet(), "every snapshot stored is kept");
      assertEquals(6, slot.devices(), "six devices read");
    }
  }

  @Test
  void eachSlotConsumesAsItIsLoadedAndAFailedLoadDropsOnlyTheSlotsNotYetHanded() throws Exception {
    try (TestEnv env = new TestEnv(4); Schema db = Schema.open(env)) {
      env.execute("UPDATE $S.slot_lease SET owner_worker_id = 'w', lease_epoch = 3, state = 'LOADING_NEW'");
      FakeWorker worker = new FakeWorker();
      Context ctx = db.vertx().getOrCreateContext();
      HeldSlots held = new HeldSlots(db.vertx(), Clock.systemUTC(), new LeaseStore(db.pool(), "w"), worker, worker.announced::incrementAndGet);
      List<Lease> leases = new ArrayList<>();
      for (int s = 0; s < 4; s++) leases.add(new Lease(s, 3, SlotState.LOADING_NEW));
      ctx.runOnContext(v -> held.reconcile(leases, held.newRead(), WorkerState.ACTIVE, false));
      // the slots of one read: one walk
      await().atMost(Duration.ofSeconds(20)).until(() -> worker.walks.size() == 1);
      Walk first = worker.walks.get(0);
      assertEquals(List.of(0, 1, 2, 3), List.copyOf(first.slots.keySet()));

      // the walk hands slot 0 over: it goes ACTIVE and consumes while the others still load
      ctx.runOnContext(v -> first.loaded.accept(List.of(0)));
      await().atMost(Duration.ofSeconds(20)).until(() -> worker.consumed.contains(0));
      assertEquals("ACTIVE", state(env, 0));
      assertEquals("LOADING_NEW", state(env, 1), "slot 1 is still loading");
      assertEquals(List.of(0), List.copyOf(worker.consumed));

      // then 1 and 2 together (one page finished both): ACTIVE in one statement, both consume
      ctx.runOnContext(v -> first.loaded.accept(List.of(1, 2)));
      await().atMost(Duration.ofSeconds(20)).until(() -> worker.consumed.size() == 3);
      assertEquals(List.of(0, 1, 2), List.copyOf(worker.consumed));

      // the walk fails before slot 3: slot 3 alone is dropped unloaded, the three handed over consume on
      ctx.runOnContext(v -> first.done.fail("page failed: connection reset"));
      await().atMost(Duration.ofSeconds(20)).until(() -> worker.lost.contains(3));
      assertEquals(List.of(3), List.copyOf(worker.lost), "only the slot the failed walk had not handed over");
      assertEquals("LOADING_NEW", state(env, 3));
      assertEquals(Map.of(0, 3L, 1, 3L, 2, 3L), new TreeMap<>(held.epochs()), "held: the three consuming slots");

      // the next read takes slot 3 again, in a walk of its own, which hands it over and ends
      ctx.runOnContext(v -> held.reconcile(leases, held.newRead(), WorkerState.ACTIVE, false));
      await().atMost(Duration.ofSeconds(20)).until(() -> worker.walks.size() == 2);
      Walk again = worker.walks.get(1);
      assertEquals(List.of(3), List.copyOf(again.slots.keySet()), "only the dropped slot is loaded again");
      ctx.runOnContext(v -> {
        again.loaded.accept(List.of(3));
        again.done.complete();
      });
      await().atMost(Duration.ofSeconds(20)).until(() -> worker.consumed.size() == 4);
      assertEquals(List.of(0, 1, 2, 3), List.copyOf(worker.consumed));
      assertEquals("ACTIVE", state(env, 3));
      // a history row per slot, one statement (one transaction time) per group handed over: 0; 1 and 2; 3
      String activations = "FROM $S.slot_lease_history WHERE new_state = 'ACTIVE' AND reason LIKE 'loaded in % ms (a walk of _ slots)'";
      assertEquals(4, env.queryLong("SELECT count(*) " + activations));
      assertEquals(3, env.queryLong("SELECT count(DISTINCT at) " + activations), "slots 1 and 2 went ACTIVE in one statement");
      await().atMost(Duration.ofSeconds(20)).until(() -> worker.announced.get() >= 1);
    }
  }

  private static String state(TestEnv env, int slot) throws Exception {
    return (String) env.query("SELECT state FROM $S.slot_lease WHERE slot_id = " + slot).get(0)[0];
  }

  /** Slot 1: devices a, b, c; slot 2: d; slot 4: e, f, g, h (slots 3 and 5 empty). */
  private static void threeSlots(TestEnv env) throws Exception {
    device(env, 1, "a", "b", "c");
    device(env, 2, "d");
    device(env, 4, "e", "f", "g", "h");
  }

  private static void device(TestEnv env, int slot, String... ids) throws Exception {
    for (String id : ids) {
      env.execute("INSERT INTO $S.device_status_current (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id,"
          + " status_payload, derived_snapshot) VALUES ('" + id + "', " + slot + ", " + slot + ", 1, 1, now(), 1, 'm-" + id + "', '{}', $$"
          + DerivedJson.encode(DerivedState.initial()) + "$$)");
    }
  }

  /** A walk the test hands over and ends by hand. */
  record Walk(Map<Integer, Long> slots, Consumer<Collection<Integer>> loaded, Promise<Void> done) {}

  /** The worker side of {@link HeldSlots}: records what it is told; its loads are the test's. */
  static final class FakeWorker implements HeldSlots.Listener {
    final List<Walk> walks = new CopyOnWriteArrayList<>();
    final List<Integer> consumed = new CopyOnWriteArrayList<>();
    final List<Integer> lost = new CopyOnWriteArrayList<>();
    final java.util.concurrent.atomic.AtomicInteger announced = new java.util.concurrent.atomic.AtomicInteger();

    @Override
    public Future<Void> load(Map<Integer, Long> slots, Consumer<Collection<Integer>> loaded) {
      Walk w = new Walk(new TreeMap<>(slots), loaded, Promise.promise());
      walks.add(w);
      return w.done.future();
    }

    @Override
    public void consume(int slot, long epoch) {
      consumed.add(slot);
    }

    @Override
    public Future<Void> release(int slot, long epoch) {
      return Future.succeededFuture();
    }

    @Override
    public void lost(int slot, long epoch) {
      lost.add(slot);
    }
  }

  /** The test's schema, migrated; one Vert.x and a pool of two on it. */
  record Schema(Vertx vertx, Pool pool) implements AutoCloseable {
    static Schema open(TestEnv env) throws Exception {
      Vertx vertx = Vertx.vertx();
      PgOptions pg = PgOptions.from(env.config(Map.of()));
      Pool pool = Db.pool(vertx, pg, 2);
      awaitResult(Migrations.apply(vertx, pool, pg, env.slots, true));
      return new Schema(vertx, pool);
    }

    @Override
    public void close() throws Exception {
      awaitResult(pool.close());
      awaitResult(vertx.close());
    }
  }
}
