package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.SlotHash;
import dev.inspection.messaging.Topology;
import dev.inspection.node.CredentialPolicy;
import dev.inspection.node.Node;
import dev.inspection.store.Db;
import dev.inspection.store.PgOptions;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 10, the message path and the defaults, played as an attacker would: forged and skewed results on a
 * slot queue, a password in redis.url, the well-known credentials outside demo mode, a Teardown without --yes.
 */
class PathSecurityIT {
  private static final String NODE = "attacker";

  private static Envelope result(String device, int claimedSlot, long cycle, long seq, String status) {
    return new Envelope(Envelope.messageId(NODE, cycle, device, seq), device, claimedSlot, 1, 1, 1, NODE, cycle, seq, Instant.ofEpochMilli(cycle),
        Priority.NORMAL, new JsonObject().put("status", status));
  }

  private static void publish(Channel ch, Topology t, int queueSlot, Envelope e) throws Exception {
    ch.basicPublish(t.exchange(), t.routingKey(queueSlot, Priority.NORMAL), new AMQP.BasicProperties.Builder().deliveryMode(2).build(), e.toBytes());
  }

  private static String statusOf(TestEnv env, String device) throws Exception {
    List<Object[]> rows = env.query("SELECT status_payload->>'status', cycle_id FROM $S.device_status_current WHERE device_id = '" + device + "'");
    return rows.isEmpty() ? null : rows.get(0)[0] + "@" + rows.get(0)[1];
  }

  @Test
  void aForgedWrongSlotResultAndAFutureCycleAreDeadLetteredWhileAGoodOneInTheSameBatchCommits() throws Exception {
    try (TestEnv env = new TestEnv(2); Channel ch = env.channel()) {
      env.start(Map.of("role", "worker", "node.id", env.name + "-w", "worker.batch.linger.ms", "300"));
      env.awaitConsuming();
      Topology t = env.topology();
      ch.confirmSelect();
      String victim = WorkerIT.devicesIn(0, 2, 1, "victim-").get(0);
      String stranger = WorkerIT.devicesIn(1, 2, 1, "stranger-").get(0);
      long before = System.currentTimeMillis() - 60_000;
      publish(ch, t, 0, result(victim, 0, before, 1, "UP"));
      publish(ch, t, 1, result(stranger, 1, before, 1, "UP"));
      ch.waitForConfirmsOrDie(10_000);
      awaitTrue(Duration.ofSeconds(30), "both devices UP", () -> (("UP@" + before).equals(statusOf(env, victim)))
          && ("UP@" + before).equals(statusOf(env, stranger)));

      long now = System.currentTimeMillis();
      // one batch on slot 0's queue: the stranger's result claims slot 0 (its device hashes to 1), the victim's
      // comes from an hour ahead, and a good one for the victim
      publish(ch, t, 0, result(stranger, 0, now, 2, "DOWN"));
      publish(ch, t, 0, result(victim, 0, now + 3_600_000, 2, "DOWN"));
      publish(ch, t, 0, result(victim, 0, now, 3, "WARN"));
      ch.waitForConfirmsOrDie(10_000);

      awaitTrue(Duration.ofSeconds(30), "two dead letters kept and the good result committed",
          () -> env.queryLong("SELECT count(*) FROM $S.dead_letter") == 2 && ("WARN@" + now).equals(statusOf(env, victim)));
      Map<String, String> byReason = new HashMap<>();
      for (Object[] r : env.query("SELECT reason, detail, queue FROM $S.dead_letter")) {
        byReason.put((String) r[0], (String) r[1]);
        assertEquals(t.queue(0, Priority.NORMAL), r[2], "the dead letter names the queue it came from");
      }
      assertEquals(2, byReason.size(), "reasons: " + byReason);
      assertTrue(byReason.get("wrong_slot").contains("hashes to slot 1"), byReason.toString());
      assertTrue(byReason.get("future_cycle").contains("ahead"), byReason.toString());
      assertEquals("UP@" + before, statusOf(env, stranger), "the forged result did not touch the stranger's status");
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE cycle_id > " + (now + 60_000)),
          "nothing from the future reached the history");
      assertEquals(0, env.readyTotal(), "nothing left behind in the slot queues");
    }
  }

  @Test
  void aPasswordInRedisUrlNeverReachesTheLogTheConfigDumpOrPrintConfig() throws Exception {
    Path secretDir = Files.createTempDirectory("path-security-it");   // outside target/: check-secrets scans target/it-data
    Path urlFile = secretDir.resolve("redis-url");
    String url = "redis://it:" + TestEnv.REDIS_PASSWORD + "@127.0.0.1:6379";
    Files.writeString(urlFile, url + "\n");
    try (TestEnv env = new TestEnv(1);
         ChildNode node = ChildNode.start(env, "worker", Map.of("role", "worker", "node.id", env.name + "-w"),
             Map.of("INSPECT_REDIS_URL_FILE", urlFile.toString(), "LOG_LEVEL", "DEBUG"))) {
      // the node read the URL from the file, dumped its configuration, and Redis refused the made-up password (a WARN)
      awaitTrue(Duration.ofSeconds(30), "the masked config dump and a Redis warning in " + node.log, () -> {
        String log = Files.readString(node.log);
        return log.contains("redis.url=redis://it:***@127.0.0.1:6379") && log.contains("WARN") && log.contains("Redis");
      });
      assertFalse(Files.readString(node.log).contains(TestEnv.REDIS_PASSWORD), "the password is in " + node.log);

      String printed = run(List.of("--print-config", "--redis.url=" + url), Map.of("INSPECT_REDIS_URL_FILE", urlFile.toString()));
      assertTrue(printed.contains("redis.url=") && !printed.contains(TestEnv.REDIS_PASSWORD), "--print-config output leaks the password");
      String refused = run(List.of("--role=worker", "--redis.url=" + url, "--slots.total=0"), Map.of());
      assertTrue(refused.contains("slots.total") && !refused.contains(TestEnv.REDIS_PASSWORD), refused.length() + " chars of output leak it");
    } finally {
      Files.deleteIfExists(urlFile);
      Files.deleteIfExists(secretDir);
    }
  }

  /** Runs the jar's main with these arguments and environment; returns stdout and stderr together. */
  private static String run(List<String> args, Map<String, String> environment) throws Exception {
    return runClass(null, args, environment).output;
  }

  private record Ran(int rc, String output) {}

  private static Ran runClass(String mainClass, List<String> args, Map<String, String> environment) throws Exception {
    String jar = System.getProperty("node.jar", "target/node.jar");
    if (!new File(jar).exists()) throw new IllegalStateException(jar + " is missing: run `mvn package`");
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    if (mainClass == null) cmd.addAll(List.of("-jar", jar));
    else cmd.addAll(List.of("-cp", jar, mainClass));
    cmd.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().putAll(environment);
    Process p = pb.start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException(cmd + " did not finish");
    }
    return new Ran(p.exitValue(), new String(out, StandardCharsets.UTF_8));
  }

  private static Throwable startFailure(TestEnv env, Map<String, String> overrides) {
    Node n = new Node(env.config(overrides), Clock.systemUTC());
    ExecutionException e = assertThrows(ExecutionException.class, () -> n.start().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS));
    n.stop();
    return e.getCause();
  }

  @Test
  void theGuestAccountAndAPostgresSuperuserAreRefusedOutsideDemoModeUnlessAllowed() throws Exception {
    try (TestEnv env = new TestEnv(1)) {
      // rabbit.user=guest (the default), not allowed: refused before anything connects
      Throwable guest = startFailure(env, Map.of("role", "probe", "node.id", env.name + "-p", "security.allow.insecure.credentials", "false"));
      assertInstanceOf(ConfigException.class, guest);
      assertTrue(guest.getMessage().contains("rabbit.user") && guest.getMessage().contains("security.allow.insecure.credentials"), guest.getMessage());

      // pg.user=postgres is a superuser: refused at start, before the schema is created
      Throwable superuser = startFailure(env, Map.of("role", "worker", "node.id", env.name + "-w", "security.allow.insecure.credentials", "false",
          "rabbit.user", "inspection-node"));
      assertInstanceOf(ConfigException.class, superuser);
      assertTrue(superuser.getMessage().contains("pg.user 'postgres' is a PostgreSQL superuser")
          && superuser.getMessage().contains("security.allow.insecure.credentials"), superuser.getMessage());
      assertEquals(0, env.queryLong("SELECT count(*) FROM information_schema.schemata WHERE schema_name = '" + env.name + "'"),
          "the refused node created nothing");

      // a role without superuser passes the same check against the real database; postgres passes when allowed or in demo mode
      String role = env.name + "_role";
      env.execute("CREATE ROLE " + role + " LOGIN NOSUPERUSER PASSWORD '" + TestEnv.PG_ROLE_PASSWORD + "'");
      try {
        Vertx vertx = Vertx.vertx();
        try {
          assertPgCheck(vertx, env.config(Map.of("security.allow.insecure.credentials", "false", "pg.user", role, "pg.password",
              TestEnv.PG_ROLE_PASSWORD)), null);
          assertPgCheck(vertx, env.config(Map.of("security.allow.insecure.credentials", "false")), "superuser");
          assertPgCheck(vertx, env.config(Map.of("security.allow.insecure.credentials", "false", "demo.mode", "true")), null);
          assertPgCheck(vertx, env.config(Map.of("security.allow.insecure.credentials", "true")), null);
        } finally {
          vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
        // what README tells operators to grant is enough: every role of a node runs as that role (guest still
        // needs the flag: the local broker has no other user)
        env.execute("GRANT CONNECT, CREATE ON DATABASE test TO " + role);
        Node node = env.start(Map.of("role", "all", "node.id", env.name + "-all", "pg.user", role, "pg.password", TestEnv.PG_ROLE_PASSWORD));
        assertTrue(node.scheduler().leading(), "the non-superuser node leads");
        assertEquals(role, env.query("SELECT schema_owner FROM information_schema.schemata WHERE schema_name = '" + env.name + "'").get(0)[0]);
        env.stop(node);
        env.execute("DROP SCHEMA IF EXISTS $S CASCADE");
      } finally {
        env.execute("DROP OWNED BY " + role);
        env.execute("DROP ROLE IF EXISTS " + role);
      }
    }
  }

  private static void assertPgCheck(Vertx vertx, Config c, String refusal) throws Exception {
    Pool pool = Db.pool(vertx, PgOptions.from(c), 1);
    try {
      var f = CredentialPolicy.checkPostgres(pool, c).toCompletionStage().toCompletableFuture();
      if (refusal == null) {
        f.get(20, TimeUnit.SECONDS);
      } else {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof ConfigException && e.getCause().getMessage().contains(refusal), e.getCause().toString());
      }
    } finally {
      pool.close();
    }
  }

  @Test
  void teardownRemovesNothingWithoutYesAndEverythingWithIt() throws Exception {
    try (TestEnv env = new TestEnv(1); Channel ch = env.channel()) {
      env.execute("CREATE SCHEMA $S");
      env.topology().declare(ch);
      List<String> flags = new ArrayList<>();
      env.baseFlags().forEach((k, v) -> flags.add("--" + k + "=" + v));
      Ran refused = runClass("dev.inspection.node.Teardown", flags, Map.of());
      assertEquals(2, refused.rc(), refused.output());
      assertTrue(refused.output().contains("--yes") && refused.output().contains("schema " + env.name), refused.output());
      assertEquals(1, env.queryLong("SELECT count(*) FROM information_schema.schemata WHERE schema_name = '" + env.name + "'"), "schema kept");
      assertEquals(0, env.ready(0, Priority.NORMAL), "queues kept (a passive declare of a deleted queue fails)");

      flags.add(0, "--yes");
      Ran done = runClass("dev.inspection.node.Teardown", flags, Map.of());
      assertEquals(0, done.rc(), done.output());
      assertEquals(0, env.queryLong("SELECT count(*) FROM information_schema.schemata WHERE schema_name = '" + env.name + "'"), "schema dropped");
      assertThrows(Exception.class, () -> env.ready(0, Priority.NORMAL), "queues deleted");
    }
  }
}
