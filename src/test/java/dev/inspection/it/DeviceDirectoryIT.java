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
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A slot's take-up reads its devices' inventory listings with their derived state, so the slot's first batch plans
 * without a query of its own (issue 14: at a failover the lookup was one more query per taken slot on the commit
 * pool, 150–550 ms of each slot's path to its first commit in the failover drill). Real PostgreSQL; the directory's
 * own pool is closed before the lookups, so an answer that needed the database would fail.
 */
class DeviceDirectoryIT {

  @Test
  void aLoadedSlotsDevicesAreLookedUpWithoutTheDatabaseListedOnesAsTheInventorySaysTheOthersByTheirQueue() throws Exception {
    try (TestEnv env = new TestEnv(4)) {
      Vertx vertx = Vertx.vertx();
      Pool pool = Db.pool(vertx, PgOptions.from(env.config(Map.of())), 2);
      Pool directoryPool = Db.pool(vertx, PgOptions.from(env.config(Map.of())), 1);
      try {
        awaitResult(Migrations.apply(vertx, pool, PgOptions.from(env.config(Map.of())), 4, true));
        env.execute("""
            INSERT INTO $S.device_resource (device_id, priority, check_type, interval_ms, payload_profile, resource_version)
            VALUES ('room-1', 1, 'sim', 10000, 'hotel_room', 1), ('plain-1', 3, 'sim', 10000, 'default', 1), ('elsewhere', 1, 'sim', 10000, 'default', 1)""");
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
      } finally {
        awaitResult(pool.close());
        awaitResult(vertx.close());
      }
    }
  }
}
