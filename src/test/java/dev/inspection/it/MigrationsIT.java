package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.node.Node;
import dev.inspection.store.Db;
import dev.inspection.store.Migrations;
import dev.inspection.store.PgOptions;
import dev.inspection.store.SchemaMigrator;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Flyway migrations (issue 15.5) against the real PostgreSQL: the schema Flyway builds is the schema the runner before
 * Flyway built ({@link LegacyRunner}); schemas that runner migrated are handed over with a baseline; pg.migrate=false only
 * checks; a non-transactional migration runs; {@code node.jar migrate} migrates and exits.
 */
class MigrationsIT {
  /** What must be equal, per schema; the schema's own name is replaced by $S, the history tables left out. */
  private static final List<String> CATALOG = List.of(
      "SELECT c.relname, c.relkind::text, c.relpersistence::text, coalesce(pg_get_expr(c.relpartbound, c.oid), '') FROM pg_class c"
          + " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '$S' ORDER BY 1",
      "SELECT table_name, column_name, ordinal_position, data_type, udt_name, is_nullable, coalesce(column_default, ''),"
          + " coalesce(character_maximum_length, -1), coalesce(numeric_precision, -1), is_identity, is_generated"
          + " FROM information_schema.columns WHERE table_schema = '$S' ORDER BY 1, 3",
      "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = '$S' ORDER BY 1, 2",
      "SELECT cl.relname, co.conname, co.contype::text, pg_get_constraintdef(co.oid) FROM pg_constraint co JOIN pg_namespace n ON n.oid = co.connamespace"
          + " LEFT JOIN pg_class cl ON cl.oid = co.conrelid WHERE n.nspname = '$S' ORDER BY 1, 2",
      "SELECT p.proname, pg_get_function_identity_arguments(p.oid), pg_get_functiondef(p.oid) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
          + " WHERE n.nspname = '$S' ORDER BY 1, 2",
      "SELECT c.relname, t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
          + " WHERE n.nspname = '$S' AND NOT t.tgisinternal ORDER BY 1, 2",
      "SELECT viewname, definition FROM pg_views WHERE schemaname = '$S' ORDER BY 1",
      "SELECT t.typname, t.typtype::text FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = '$S' ORDER BY 1",
      "SELECT sequencename, data_type::text, start_value, increment_by FROM pg_sequences WHERE schemaname = '$S' ORDER BY 1");

  private Vertx vertx;
  private final List<TestEnv> envs = new ArrayList<>();

  @BeforeEach
  void vertx() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void close() throws Exception {
    for (TestEnv e : envs) e.close();
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private TestEnv env() throws Exception {
    TestEnv e = new TestEnv(4);
    envs.add(e);
    return e;
  }

  private PgOptions pg(TestEnv env) {
    return PgOptions.from(env.config(Map.of()));
  }

  private <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }

  private int flyway(TestEnv env, boolean migrate) throws Exception {
    Pool pool = Db.pool(vertx, pg(env), 1);
    try {
      return await(Migrations.apply(vertx, pool, pg(env), env.slots, migrate));
    } finally {
      pool.close();
    }
  }

  private void legacy(TestEnv env, List<String> files) throws Exception {
    Pool pool = Db.pool(vertx, pg(env), 1);
    try {
      await(LegacyRunner.apply(pool, env.name, env.slots, files));
    } finally {
      pool.close();
    }
  }

  /** The catalogue rows of the schema and the row count of each table, as text. */
  private static List<String> snapshot(TestEnv env) throws Exception {
    List<String> out = new ArrayList<>();
    for (String q : CATALOG) {
      for (Object[] row : env.query(q)) {
        String line = String.join(" | ", java.util.Arrays.stream(row).map(String::valueOf).toList()).replace(env.name, "$S");
        if (!line.contains("schema_migrations") && !line.contains(SchemaMigrator.HISTORY)) out.add(line);
      }
    }
    for (Object[] t : env.query("SELECT tablename FROM pg_tables WHERE schemaname = '$S' ORDER BY 1")) {
      String table = (String) t[0];
      if (table.equals("schema_migrations") || table.equals(SchemaMigrator.HISTORY)) continue;
      out.add("rows " + table + " " + env.queryLong("SELECT count(*) FROM $S." + table));
    }
    return out;
  }

  private static List<Object[]> history(TestEnv env) throws Exception {
    return env.query("SELECT type, version, success FROM $S." + SchemaMigrator.HISTORY + " WHERE version IS NOT NULL ORDER BY installed_rank");
  }

  @Test
  void flywayBuildsTheSchemaTheRunnerBeforeItBuilt() throws Exception {
    TestEnv old = env();
    TestEnv fresh = env();
    legacy(old, Migrations.FILES);
    assertEquals(Migrations.FILES.size(), flyway(fresh, true));
    List<String> a = snapshot(old);
    List<String> b = snapshot(fresh);
    assertTrue(a.size() > 200, "a real catalogue was compared: " + a.size() + " rows");
    assertTrue(a.stream().anyMatch(l -> l.startsWith("merge_payload |")), "functions compared");
    assertTrue(a.stream().anyMatch(l -> l.contains("CREATE INDEX idx_slot_lease_owner")), "indexes compared");
    assertEquals(String.join("\n", a), String.join("\n", b));
    List<Object[]> h = history(fresh);
    assertEquals(Migrations.FILES.size(), h.size());
    assertEquals("001", h.get(0)[1]);
    assertEquals("015", h.get(h.size() - 1)[1]);
    assertEquals(0, flyway(fresh, true), "a second start applies nothing");
  }

  @Test
  void aSchemaOfTheRunnerBeforeFlywayIsBaselinedAndBroughtUpToDate() throws Exception {
    TestEnv reference = env();
    flyway(reference, true);
    TestEnv old = env();
    legacy(old, Migrations.FILES.subList(0, 10)); // an installation of the time before V011
    old.execute("INSERT INTO $S.device_resource (device_id, check_type, interval_ms, resource_version) SELECT 'd' || g, 'sim', 1000, g FROM generate_series(1, 3) g");
    assertEquals(5, flyway(old, true), "only V011 to V015 applied");
    List<Object[]> h = history(old);
    assertEquals(6, h.size());
    assertEquals(List.of("BASELINE", "010"), List.of(h.get(0)[0], h.get(0)[1]));
    assertEquals(List.of("SQL", "011", "SQL", "012", "SQL", "013", "SQL", "014", "SQL", "015"),
        List.of(h.get(1)[0], h.get(1)[1], h.get(2)[0], h.get(2)[1], h.get(3)[0], h.get(3)[1], h.get(4)[0], h.get(4)[1], h.get(5)[0], h.get(5)[1]));
    assertEquals(3, old.queryLong("SELECT count(*) FROM $S.device_resource"), "its data kept");
    old.execute("DELETE FROM $S.device_resource");
    assertEquals(String.join("\n", snapshot(reference)), String.join("\n", snapshot(old)));
    assertEquals(0, flyway(old, false), "current: a node that only checks starts");

    TestEnv complete = env();
    legacy(complete, Migrations.FILES);
    assertEquals(0, flyway(complete, true));
    assertEquals("015", history(complete).get(0)[1]);
  }

  @Test
  void v013KeepsEveryDerivedSnapshotAsTheSameJson() throws Exception {
    TestEnv old = env();
    legacy(old, Migrations.FILES.subList(0, 12)); // up to V012: derived_snapshot is jsonb
    old.execute("""
        INSERT INTO $S.device_status_current (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id, status_payload,
          derived_snapshot)
        VALUES ('with', 0, 0, 1, 1, now(), 1, 'm1', '{"status":"UP"}', '{"v":1,"consec_failure_count":3,"ring":"OOF","alerts":{"a \\"b\\"":1}}'),
               ('without', 0, 0, 1, 1, now(), 1, 'm2', '{"status":"UP"}', NULL)""");
    String before = (String) old.query("SELECT derived_snapshot::text FROM $S.device_status_current WHERE device_id = 'with'").get(0)[0];
    assertEquals(3, flyway(old, true), "V013 to V015 applied");
    assertEquals("json", old.query("SELECT data_type FROM information_schema.columns WHERE table_schema = '$S' AND table_name = 'device_status_current'"
        + " AND column_name = 'derived_snapshot'").get(0)[0]);
    assertEquals(new JsonObject(before), new JsonObject((String) old.query("SELECT derived_snapshot::text FROM $S.device_status_current WHERE device_id = 'with'")
        .get(0)[0]));
    assertEquals(3L, old.queryLong("SELECT (derived_snapshot->>'consec_failure_count')::int FROM $S.device_status_current WHERE device_id = 'with'"));
    assertEquals(1L, old.queryLong("SELECT count(*) FROM $S.device_status_current WHERE device_id = 'without' AND derived_snapshot IS NULL"));
  }

  /**
   * V014: the hotel keys move from expression indexes over status_payload into stored columns, so a device's new payload
   * is a HOT update again (no index entry added); the keys of the rows already there are kept, and the room API's index
   * is used.
   */
  @Test
  void v014KeepsTheHotelKeysAndLetsAPayloadChangeUpdateInPlace() throws Exception {
    TestEnv old = env();
    legacy(old, Migrations.FILES.subList(0, 13)); // up to V013: the hotel keys are expression indexes
    String insert = """
        INSERT INTO $S.device_status_current (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id, status_payload,
          payload_profile)
        VALUES ('rcu', 0, 0, 1, 1, now(), 1, 'm1', '{"hotel_id":1085,"room_id":"8201","guid":"g1","ts_ms":1}', 'hotel_room'),
               ('plain', 0, 0, 1, 1, now(), 1, 'm2', '{"status":"UP","hotel_id":"not a hotel device"}', 'default')""";
    old.execute(insert);
    String payloadChange = "UPDATE $S.device_status_current SET status_payload = jsonb_set(status_payload, '{ts_ms}', to_jsonb(seq + 1)), seq = seq + 1;"
        + " SELECT pg_stat_force_next_flush()";
    String counts = "SELECT n_tup_upd || ' ' || n_tup_hot_upd FROM pg_stat_user_tables WHERE schemaname = '$S' AND relname = 'device_status_current'";
    old.execute(payloadChange);
    awaitTrue(Duration.ofSeconds(20), "the two updates counted", () -> old.query(counts).get(0)[0].equals("2 0"), () -> (String) old.query(counts).get(0)[0]);
    // before V014 neither payload change was a HOT update (the counts say "2 0")
    assertEquals(2, flyway(old, true), "V014 and V015 applied");
    assertEquals(List.of("rcu", "1085", "8201", "g1"), List.of(old.query(
        "SELECT device_id, hotel_id, room_id, hotel_guid FROM $S.device_status_current WHERE hotel_id IS NOT NULL").get(0)));
    assertEquals(1L, old.queryLong("SELECT count(*) FROM $S.device_status_current WHERE hotel_id IS NOT NULL"), "only hotel_room devices have hotel keys");
    String before = (String) old.query(counts).get(0)[0]; // the rewrite of V014 is not counted as updates
    long upd = Long.parseLong(before.split(" ")[0]);
    long hot = Long.parseLong(before.split(" ")[1]);
    old.execute(payloadChange);
    awaitTrue(Duration.ofSeconds(20), "two more updates counted, both HOT", () -> old.query(counts).get(0)[0].equals((upd + 2) + " " + (hot + 2)),
        () -> before + " -> " + old.query(counts).get(0)[0]);
    assertEquals(1L, old.queryLong("SELECT count(*) FROM pg_indexes WHERE schemaname = '$S' AND indexname = 'idx_dsc_hotel_room'"
        + " AND indexdef LIKE '%(hotel_id, room_id)%'"));
  }

  /**
   * V015: history keeps its key and loses idx_dsh_device_collected, on the parent and on every partition; the rows stay,
   * and a device's history, newest first (the device API's read), is still an index scan of the key, not a scan of the table.
   */
  @Test
  void v015DropsTheSecondHistoryIndexAndADevicesHistoryStillReadsByTheKey() throws Exception {
    TestEnv old = env();
    legacy(old, Migrations.FILES.subList(0, 14)); // up to V014: two history indexes
    old.execute("""
        INSERT INTO $S.device_status_history (device_id, cycle_id, seq, retention_class, slot_id, collected_at, writer_epoch, message_id, status_payload)
        SELECT 'd' || (g % 2), 1000 + g, 0, 1 + g % 4 / 2, 0, now(), 1, 'm' || g, '{"status":"UP"}' FROM generate_series(1, 40000) g""");
    String indexes = "SELECT count(*) FROM pg_indexes WHERE schemaname = '$S' AND tablename LIKE 'device_status_history%' AND indexdef LIKE '%(device_id, collected_at DESC)%'";
    long before = old.queryLong(indexes);
    assertTrue(before >= 5, "before V015 the parent and its partitions have the index: " + before);
    assertEquals(1, flyway(old, true), "V015 applied");
    assertEquals(0, old.queryLong(indexes), "no history index on (device_id, collected_at) is left");
    assertEquals(40000, old.queryLong("SELECT count(*) FROM $S.device_status_history"), "the rows are kept");
    assertEquals(1L, old.queryLong("SELECT count(*) FROM pg_indexes WHERE schemaname = '$S' AND tablename = 'device_status_history'"), "the key alone");
    old.execute("ANALYZE $S.device_status_history");
    String plan = old.query("EXPLAIN (COSTS OFF) " + dev.inspection.scheduler.DeviceStore.HISTORY.replace("$1", "'d1'").replace("$2", "20")
        .replace("device_status_history", "$S.device_status_history")).stream().map(r -> (String) r[0]).reduce("", (a, b) -> a + b + "\n");
    // the rows are in the default partitions (cycle_id 1001..41000 is no day of today's); 20,000 rows of the device, 20 read
    assertTrue(plan.contains("Index Scan Backward using device_status_history_c1_default_pkey")
        && plan.contains("Index Scan Backward using device_status_history_c2_default_pkey") && !plan.contains("->  Sort") && !plan.contains("Seq Scan"), plan);
  }

  @Test
  void aChangedFileInTheOldHistoryIsRefused() throws Exception {
    TestEnv old = env();
    legacy(old, Migrations.FILES);
    old.execute("UPDATE $S.schema_migrations SET checksum = 'edited' WHERE version = 'V004'");
    Throwable e = failure(() -> flyway(old, true));
    assertInstanceOf(IllegalStateException.class, e);
    assertTrue(e.getMessage().contains("V004") && e.getMessage().contains("checksum"), e.getMessage());
    assertEquals(0, old.queryLong("SELECT count(*) FROM pg_tables WHERE schemaname = '$S' AND tablename = '" + SchemaMigrator.HISTORY + "'"));
  }

  @Test
  void withoutMigratingANodeRefusesASchemaThatIsNotCurrent() throws Exception {
    TestEnv env = env();
    Throwable e = failure(() -> flyway(env, false));
    assertInstanceOf(IllegalStateException.class, e);
    assertTrue(e.getMessage().contains(Migrations.FILES.size() + " pending migration(s) (V001, V002") && e.getMessage().contains("node.jar migrate"), e.getMessage());
    TestEnv old = env();
    legacy(old, Migrations.FILES);
    Throwable e2 = failure(() -> flyway(old, false));
    assertTrue(e2.getMessage().contains("runner before Flyway") && e2.getMessage().contains("node.jar migrate"), e2.getMessage());
  }

  @Test
  void aNodeWithPgMigrateFalseDoesNotStartOnASchemaThatIsNotCurrentAndStartsOnceItIs() throws Exception {
    TestEnv env = env();
    Node refused = new Node(env.config(Map.of("role", "scheduler", "pg.migrate", "false")), Clock.systemUTC());
    try {
      Throwable e = failure(() -> refused.start().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS));
      assertTrue(e.getMessage().contains("pending migration(s)") && e.getMessage().contains("pg.migrate=false"), e.getMessage());
    } finally {
      refused.stop().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    assertEquals(0, env.queryLong("SELECT count(*) FROM pg_namespace WHERE nspname = '$S'"), "nothing created by a node that only checks");
    flyway(env, true);
    Node n = env.start(Map.of("role", "scheduler", "pg.migrate", "false"));
    assertTrue(n.scheduler().leading());
  }

  @Test
  void aMigrationThatCannotRunInATransactionRuns() throws Exception {
    TestEnv env = env();
    SchemaMigrator m = new SchemaMigrator(pg(env), List.of(SchemaMigrator.LOCATION, "classpath:db/it-nontx"));
    assertEquals(Migrations.FILES.size() + 1, await(vertx.executeBlocking(m::migrate, false)));
    assertEquals(1, env.queryLong("SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
        + " WHERE n.nspname = '$S' AND c.relname = 'idx_it_nontx_alert_rank' AND i.indisvalid"));
    assertEquals(Migrations.FILES.size() + 1, history(env).size());
  }

  @Test
  void theMigrateCommandMigratesAndExits() throws Exception {
    TestEnv env = env();
    String jar = System.getProperty("node.jar", "target/node.jar");
    assertTrue(new File(jar).exists(), jar + " is missing: run mvn package");
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx128m", "-jar", jar, "migrate"));
    env.baseFlags().forEach((k, v) -> cmd.add("--" + k + "=" + v));
    Path log = env.dataDir.resolve("migrate.log");
    for (int run = 0; run < 2; run++) {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      try {
        assertTrue(p.waitFor(150, TimeUnit.SECONDS), "migrate finished");
      } finally {
        p.destroyForcibly();
      }
      String out = Files.readString(log);
      assertEquals(0, p.exitValue(), out);
      assertTrue(out.contains("schema " + env.name + " on 127.0.0.1:5432/test is current: applied " + (run == 0 ? Migrations.FILES.size() : 0) + " migration(s)"), out);
    }
    assertEquals(env.slots, env.queryLong("SELECT count(*) FROM $S.slot_lease"));
    assertEquals(0, flyway(env, false));
    List<String> bad = new ArrayList<>(cmd);
    bad.add("--slots.total=" + (env.slots * 2));
    Process p = new ProcessBuilder(bad).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      assertTrue(p.waitFor(150, TimeUnit.SECONDS), "migrate finished");
    } finally {
      p.destroyForcibly();
    }
    assertEquals(2, p.exitValue(), Files.readString(log));
    assertTrue(Files.readString(log).contains("slots.total is " + env.slots * 2), Files.readString(log));
  }

  private interface Call {
    Object call() throws Exception;
  }

  private static Throwable failure(Call c) {
    try {
      c.call();
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (Exception e) {
      return e;
    }
    throw new AssertionError("expected a failure");
  }
}
