package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitResult;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.Priority;
import dev.inspection.state.PayloadProfiles;
import dev.inspection.store.Db;
import dev.inspection.store.Migrations;
import dev.inspection.store.PgOptions;
import dev.inspection.worker.DeviceDirectory;
import dev.inspection.worker.SnapshotLoader;
import dev.inspection.ManualClock;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.List;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * A slot's take-up reads its devices' inventory listings with their derived state, so the slot's first batch plans
 * without a query of its own (issue 14: at a failover the lookup was one more query per taken slot on the commit
 * pool, 150–550 ms of each slot's path to its first commit in the failover drill). Real PostgreSQL; the directory's
 * own pool is closed before the lookups, so an answer that needed the database would fail.
 */
class DeviceDirectoryIT {

  /** What a test does with a migrated schema: a pool of 2 for the test, one of 1 for the directory alone. */
  private interface Body {
    void run(TestEnv env, Vertx vertx, Pool pool, Pool directoryPool) throws Exception;
  }

  /** Runs {@code body} on a fresh schema whose inventory lists {@code rows}: {@code (device_id, priority, payload_profile)} tuples. */
  private static void withInventory(String rows, Body body) throws Exception {
    try (TestEnv env = new TestEnv(4)) {
      Vertx vertx = Vertx.vertx();
      Pool pool = Db.pool(vertx, PgOptions.from(env.config(Map.of())), 2);
      Pool directoryPool = Db.pool(vertx, PgOptions.from(env.config(Map.of())), 1);
      try {
        awaitResult(Migrations.apply(vertx, pool, PgOptions.from(env.config(Map.of())), 4, true));
        env.execute("INSERT INTO $S.device_resource (device_id, priority, check_type, interval_ms, payload_profile, resource_version)"
            + " SELECT d, p, 'sim', 10000, pr, 1 FROM (VALUES " + rows + ") AS t(d, p, pr)");
        body.run(env, vertx, pool, directoryPool);
      } finally {
        awaitResult(pool.close());
        awaitResult(vertx.close());
      }
    }
  }

  @Test
  void aLoadedSlotsDevicesAreLookedUpWithoutTheDatabaseListedOnesAsTheInventorySaysTheOthersByTheirQueue() throws Exception {
    withInventory("('room-1', 1, 'hotel_room'), ('plain-1', 3, 'default'), ('elsewhere', 1, 'default')", (env, vertx, pool, directoryPool) -> {
      env.execute("""
          INSERT INTO $S.device_status_current (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id, status_payload)
          SELECT d, 2, 2, 1, 1, now(), 1, 'm-' || d, '{"status":"UP"}' FROM unnest(ARRAY['room-1', 'plain-1', 'sim-1']) d""");
      env.execute("""
          INSERT INTO $S.device_status_current (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id, status_payload)
          VALUES ('elsewhere', 3, 3, 1, 1, now(), 1, 'm-elsewhere', '{"status":"UP"}')""");

      DeviceDirectory directory = new DeviceDirectory(directoryPool, 600_000, 1_000);
      SnapshotLoader.Snapshot snap = awaitResult(new SnapshotLoader(pool, 2, directory::listed).load(2)); // pages of 2: the listings of every page
      assertEquals(3, snap.devices());
      awaitResult(directoryPool.close());

      Map<String, DeviceDirectory.Info> infos = awaitResult(directory.lookup(List.of("room-1", "plain-1", "sim-1"),
          Map.of("room-1", Priority.NORMAL, "plain-1", Priority.NORMAL, "sim-1", Priority.HIGH)));
      assertEquals(new DeviceDirectory.Info(1, PayloadProfiles.HOTEL_ROOM, true), infos.get("room-1"), "listed: the inventory's priority and profile");
      assertEquals(new DeviceDirectory.Info(3, PayloadProfiles.DEFAULT, true), infos.get("plain-1"));
      assertEquals(DeviceDirectory.Info.fallback(Priority.HIGH), infos.get("sim-1"), "not listed: the priority of the queue it came on");
      assertFalse(infos.get("sim-1").known());
      // the same unlisted device on another queue gets that queue's priority, still without a query
      assertEquals(2, awaitResult(directory.lookup(List.of("sim-1"), Map.of("sim-1", Priority.NORMAL))).get("sim-1").priority());

      // a device of a slot that was not loaded still needs the database, whose pool is gone: the lookup says so
      Exception e = assertThrows(Exception.class, () -> awaitResult(directory.lookup(List.of("elsewhere"), Map.of("elsewhere", Priority.NORMAL))));
      assertTrue(e.getMessage() != null && !e.getMessage().isEmpty(), "the failure names its cause");
    });
  }

  /** {@code call} made on {@code ctx} (the directory is used from one context, as a worker's is), its result awaited. */
  private static <T> T on(Context ctx, Supplier<Future<T>> call) throws Exception {
    Promise<T> p = Promise.promise();
    ctx.runOnContext(v -> call.get().onComplete(p));
    return awaitResult(p.future());
  }

  /** {@code f} if it was complete when the call returned (checked on the calling context), else a failure saying so. */
  private static <T> Future<T> answeredAtOnce(Future<T> f) {
    return f.isComplete() ? f : Future.failedFuture("the lookup waited for the database");
  }

  /**
   * A listing older than the TTL is answered at once, from what the worker read before, and read again in the
   * background: the device's next results get the inventory's change, and no batch waits for the read. When the read
   * fails (the database is gone), the old listings are still answered.
   */
  @Test
  void anOldListingIsAnsweredAtOnceAndReadAgainInTheBackgroundAlsoWhenTheReadFails() throws Exception {
    withInventory("('d1', 1, 'hotel_room'), ('d2', 3, 'default')", (env, vertx, pool, directoryPool) -> {
      ManualClock clock = new ManualClock(1_000_000);
      DeviceDirectory directory = new DeviceDirectory(directoryPool, 60_000, 1_000, clock);
      Context ctx = vertx.getOrCreateContext();
      List<String> both = List.of("d1", "d2");
      Map<String, Priority> queue = Map.of("d1", Priority.NORMAL, "d2", Priority.NORMAL);

      Map<String, DeviceDirectory.Info> first = on(ctx, () -> directory.lookup(both, queue));
      assertEquals(new DeviceDirectory.Info(1, PayloadProfiles.HOTEL_ROOM, true), first.get("d1"), "never seen: read before the answer");
      assertEquals(2, directory.firstReads());
      env.execute("UPDATE $S.device_resource SET priority = 2, payload_profile = 'default' WHERE device_id = 'd1'");

      clock.advance(30_000);
      assertEquals(1, on(ctx, () -> directory.lookup(both, queue)).get("d1").priority(), "within the TTL: the listing as read");
      assertEquals(0, directory.refreshed());

      clock.advance(31_000); // 61 s since the read
      Map<String, DeviceDirectory.Info> stale = on(ctx, () -> answeredAtOnce(directory.lookup(both, queue)));
      assertEquals(1, stale.get("d1").priority(), "the old listing, until the new one is read");
      TestEnv.awaitTrue(Duration.ofSeconds(20), "the background read brings the inventory's change",
          () -> on(ctx, () -> directory.lookup(both, queue)).get("d1").equals(new DeviceDirectory.Info(2, PayloadProfiles.DEFAULT, true)));
      assertEquals(2, directory.refreshed(), "both old listings read again, once");
      assertEquals(3, on(ctx, () -> directory.lookup(both, queue)).get("d2").priority());

      // the database goes away: old listings are still answered, and so are the next lookups after the failed read
      awaitResult(directoryPool.close());
      clock.advance(61_000);
      Map<String, DeviceDirectory.Info> without = on(ctx, () -> answeredAtOnce(directory.lookup(both, queue)));
      assertEquals(2, without.get("d1").priority(), "no batch fails for a listing it could not read again");
      assertEquals(2, on(ctx, () -> directory.lookup(both, queue)).get("d1").priority());
      assertEquals(2, directory.refreshed(), "nothing read since");
      TestEnv.awaitTrue(Duration.ofSeconds(20), "the failed background read is counted", () -> directory.refreshFailed() == 2);
      assertEquals(2, directory.firstReads(), "the aged listings were never read before an answer");
      // a device never seen still needs the database: that lookup fails, as before
      assertThrows(Exception.class, () -> on(ctx, () -> directory.lookup(List.of("d3"), Map.of("d3", Priority.NORMAL))));
    });
  }
}
