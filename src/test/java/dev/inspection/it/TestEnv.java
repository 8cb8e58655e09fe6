package dev.inspection.it;

import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.inspection.config.Config;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.Topology;
import dev.inspection.node.Node;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * One integration test's private world on the real local services: its own PostgreSQL schema, its own
 * exchange and queue names, its own data directory. {@link #close()} removes all of it.
 */
public final class TestEnv implements AutoCloseable {
  /** The secrets every test node runs with; `.ci/run` checks that neither ever appears in the build output. */
  public static final String API_TOKEN = "it-token-9c41f7d2b86e4a1f0b3d";
  public static final String CONSOLE_USER = "it-operator";
  public static final String CONSOLE_PASSWORD = "it-password-7e2a91c4d5";
  /** A password a test puts into redis.url (PathSecurityIT); scripts/check-secrets.sh checks it never reaches a log. */
  public static final String REDIS_PASSWORD = "it-redis-pw-4f0c8a17e3";
  /** The password of the non-superuser PostgreSQL role PathSecurityIT creates. */
  public static final String PG_ROLE_PASSWORD = "it-pg-role-pw-b71e09c5d2";
  /** The read-only API token and console login, and the probes' token (every group); scripts/check-secrets.sh scans for each *_TOKEN / *_PASSWORD. */
  public static final String READ_TOKEN = "it-read-token-5d3b8e1f94c2a7";
  public static final String READONLY_USER = "it-viewer";
  public static final String READONLY_PASSWORD = "it-viewer-pass-3f9c1a7e";
  public static final String PROBE_TOKEN = "it-probe-token-8a6e2c4f1b9d07";
  /** What gateways push frames to a probe with (probe.ingest.tokens, issue 13). */
  public static final String INGEST_TOKEN = "it-ingest-token-5d2f8b1e9c4a73";
  public static final String PROBE_EAST_TOKEN = "it-probe-east-token-1c7b5e9a3d";
  public final String name;
  public final Path dataDir;
  public final int slots;
  private final Map<String, String> base = new HashMap<>();
  private final List<Node> nodes = new ArrayList<>();
  private final List<String> extraTopologies = new ArrayList<>();
  private Connection amqp;

  public TestEnv(int slots) throws Exception {
    this.name = "it_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    this.slots = slots;
    this.dataDir = Path.of("target", "it-data", name).toAbsolutePath();
    Files.createDirectories(dataDir);
    base.put("pg.schema", name);
    base.put("topology.prefix", name);
    base.put("redis.channel.prefix", name);
    base.put("slots.total", Integer.toString(slots));
    base.put("http.port", "0");
    base.put("data.dir", dataDir.toString());
    base.put("probe.sim.devices", "0");
    base.put("api.token", API_TOKEN);
    base.put("console.user", CONSOLE_USER);
    base.put("console.password", CONSOLE_PASSWORD);
    // the local services run as postgres (a superuser) and guest: allowed for tests only (PathSecurityIT tests the refusal)
    base.put("security.allow.insecure.credentials", "true");
    base.put("api.read.token", READ_TOKEN);
    base.put("console.readonly.user", READONLY_USER);
    base.put("console.readonly.password", READONLY_PASSWORD);
    base.put("api.probe.tokens", "*=" + PROBE_TOKEN);
    base.put("probe.api.token", PROBE_TOKEN);
    base.put("probe.ingest.tokens", INGEST_TOKEN);
    base.put("backoff.initial.ms", "100");
    base.put("backoff.max.ms", "1000");
    base.put("worker.lease.poll.ms", "300");
    base.put("worker.heartbeat.ms", "500");
    base.put("worker.warmup.ms", "500");
    base.put("worker.quarantine.ms", "1000");
    base.put("scheduler.tick.ms", "200");
    base.put("scheduler.election.ms", "300");
    base.put("scheduler.leader.grace.ms", "1000");
    base.put("scheduler.rebalance.interval.ms", "1000");
    base.put("scheduler.cooldown.slot.ms", "0");
    base.put("scheduler.cooldown.source.ms", "0");
    base.put("worker.batch.linger.ms", "50");
    base.put("outbox.replay.interval.ms", "500");
    // the DB-degraded mode (issue 12) is DegradedModeIT's: elsewhere a commit stalled 5 s by a loaded machine must not spill
    // history rows that then wait out a minute's dwell before the back-fill, past a test's delivery deadline
    base.put("worker.degraded.enter.p99.ms", "30000");
    base.put("worker.degraded.dwell.ms", "5000");
    base.put("outbox.replay.min.age.ms", "500");
    // the tests count results at full speed: no cold-start pacing unless a test asks for it (ControlPlaneIT, ScaleOutIT)
    base.put("probe.pacing.start", "1");
    base.put("scheduler.min.workers", "0");
  }

  /** The per-test settings (schema, names, short timings) as flags for a child process. */
  public Map<String, String> baseFlags() {
    Map<String, String> m = new HashMap<>(base);
    m.remove("http.port");
    return m;
  }

  public Config config(Map<String, String> overrides) {
    Map<String, String> m = new HashMap<>(base);
    m.putAll(overrides);
    return Config.of(m);
  }

  public Topology topology() {
    return Topology.of(config(Map.of()));
  }

  private Node scheduler;
  private boolean autoScheduler = true;
  /** A test that reshards: its new slots' queues are deleted too at the end. */
  private int grownTo;

  public void slotsGrowTo(int total) {
    grownTo = total;
  }

  /** Tests that play the leader themselves (manual epoch bumps) start workers without a scheduler. */
  public TestEnv withoutScheduler() {
    autoScheduler = false;
    return this;
  }

  /** The scheduler started for this test (the first worker start brings one up unless told otherwise). */
  public Node scheduler() {
    return scheduler;
  }

  /** Publishes {@code e} persistently to its slot's lane, as a probe does (the caller's channel confirms, if it asks). */
  public static void publish(Channel ch, Topology t, Envelope e) throws Exception {
    ch.basicPublish(t.exchange(), t.routingKey(e.slotId(), e.priority()), new AMQP.BasicProperties.Builder().deliveryMode(2).build(), e.toBytes());
  }

  /** Starts a node in this JVM and waits until it is up. */
  public Node start(Map<String, String> overrides) throws Exception {
    String role = overrides.getOrDefault("role", "all");
    if (autoScheduler && scheduler == null && role.equals("worker")) {
      scheduler = startNode(Map.of("role", "scheduler", "node.id", name + "-sched"));
      Node s = scheduler;
      awaitTrue(Duration.ofSeconds(30), "the scheduler leads", () -> s.scheduler().leading());
    }
    Node n = startNode(overrides);
    if (scheduler == null && (role.equals("scheduler") || role.equals("all"))) {
      scheduler = n;
      awaitTrue(Duration.ofSeconds(30), "the first scheduler leads", () -> n.scheduler().leading());
    }
    return n;
  }

  private Node startNode(Map<String, String> overrides) throws Exception {
    Node n = new Node(config(overrides), Clock.systemUTC());
    n.start().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    nodes.add(n);
    return n;
  }

  /**
   * A topology prefix of the test's own besides {@link #name} (a probe on another prefix, say): {@link #close()} deletes
   * its queues and exchanges too, after every node stopped (deleted under a running node, they come back on its
   * reconnect and stay behind).
   */
  public String ownTopology(String prefix) {
    extraTopologies.add(prefix);
    return prefix;
  }

  /** Runs redis-cli against 127.0.0.1:{@code port}; its output (errors included), after at most 10 s. */
  public static String redisCli(int port, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("redis-cli", "-h", "127.0.0.1", "-p", Integer.toString(port)));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(10, TimeUnit.SECONDS)) p.destroyForcibly();
    return out;
  }

  public void stop(Node n) throws Exception {
    nodes.remove(n);
    if (n == scheduler) scheduler = null;
    n.stop().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  /** The test's own broker connection, opened again after a broker restart. */
  private synchronized Connection amqp() throws Exception {
    if (amqp == null || !amqp.isOpen()) {
      ConnectionFactory f = new ConnectionFactory();
      f.setHost("127.0.0.1");
      f.setAutomaticRecoveryEnabled(false);
      amqp = f.newConnection(name + "-test");
    }
    return amqp;
  }

  public Channel channel() throws Exception {
    return amqp().createChannel();
  }

  /** Messages ready in a slot queue (passive declare). */
  public long ready(int slot, Priority p) throws Exception {
    try (Channel ch = amqp().createChannel()) {
      return ch.queueDeclarePassive(topology().queue(slot, p)).getMessageCount();
    }
  }

  public long consumers(int slot, Priority p) throws Exception {
    try (Channel ch = amqp().createChannel()) {
      return ch.queueDeclarePassive(topology().queue(slot, p)).getConsumerCount();
    }
  }

  /** Waits until every slot queue has a consumer (the topology exists and a worker holds every slot). */
  public void awaitConsuming() {
    awaitTrue(Duration.ofSeconds(30), "every slot queue consumed", () -> {
      for (int s = 0; s < slots; s++) for (Priority p : Priority.values()) if (consumers(s, p) < 1) return false;
      return true;
    });
  }

  public long readyTotal() throws Exception {
    long n = 0;
    for (int s = 0; s < slots; s++) for (Priority p : Priority.values()) n += ready(s, p);
    return n;
  }

  /** Dead letters still in the queue plus those a scheduler already kept in the dead_letter table. */
  public long deadLetterCount() throws Exception {
    long kept = 0;
    try {
      kept = queryLong("SELECT count(*) FROM $S.dead_letter");
    } catch (Exception noTableYet) {
      // before the migrations ran
    }
    try (Channel ch = amqp().createChannel()) {
      return kept + ch.queueDeclarePassive(topology().deadLetterQueue()).getMessageCount();
    }
  }

  /**
   * Runs {@code lockSql} ({@code $S}: this test's schema) in a transaction of a connection of its own and keeps it open until the
   * returned lock is closed, which rolls it back: a table or a row locked under the node's feet, as an operator's statement or a
   * stalled transaction would hold it.
   */
  public Held hold(String lockSql) throws Exception {
    java.sql.Connection c = pg();
    try {
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.execute(lockSql.replace("$S", name));
      }
      return new Held(c);
    } catch (Exception e) {
      c.close();
      throw e;
    }
  }

  /** A lock {@link #hold} took; closing it rolls its transaction back and lets go. */
  public static final class Held implements AutoCloseable {
    private final java.sql.Connection c;

    private Held(java.sql.Connection c) {
      this.c = c;
    }

    @Override
    public void close() throws Exception {
      try (java.sql.Connection closing = c) {
        closing.rollback();
      }
    }
  }

  /** A fresh connection per call: tests restart PostgreSQL under our feet. */
  private static java.sql.Connection pg() throws Exception {
    return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/test", "postgres", "");
  }

  public long queryLong(String sql) throws Exception {
    try (java.sql.Connection pg = pg(); Statement st = pg.createStatement(); ResultSet rs = st.executeQuery(sql.replace("$S", name))) {
      rs.next();
      return rs.getLong(1);
    }
  }

  public List<Object[]> query(String sql) throws Exception {
    List<Object[]> out = new ArrayList<>();
    try (java.sql.Connection pg = pg(); Statement st = pg.createStatement(); ResultSet rs = st.executeQuery(sql.replace("$S", name))) {
      int n = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        Object[] row = new Object[n];
        for (int i = 0; i < n; i++) row[i] = rs.getObject(i + 1);
        out.add(row);
      }
    }
    return out;
  }

  public void execute(String sql) throws Exception {
    try (java.sql.Connection pg = pg(); Statement st = pg.createStatement()) {
      st.execute(sql.replace("$S", name));
    }
  }

  /** The probe's own record of what it produced: every row its outbox ever held that the cleaner has not removed. */
  public List<Ledger.Produced> produced(String nodeId) throws Exception {
    Path db = dataDir.resolve("outbox-" + nodeId + ".db");
    List<Ledger.Produced> out = new ArrayList<>();
    try (java.sql.Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
         Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT message_id, device_id, cycle_id, seq, 0 FROM outbox"
             + " UNION ALL SELECT message_id, device_id, cycle_id, seq, 1 FROM shed_row")) {
      while (rs.next()) out.add(new Ledger.Produced(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getLong(4), rs.getBoolean(5)));
    }
    return out;
  }

  public long outboxUnconfirmed(String nodeId) throws Exception {
    return outboxUnconfirmed(nodeId, true);
  }

  /** {@code withCritical} false: only the rows a watermark may shed (devices of priority 2 and 3). */
  public long outboxUnconfirmed(String nodeId, boolean withCritical) throws Exception {
    Path db = dataDir.resolve("outbox-" + nodeId + ".db");
    try (java.sql.Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
         Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT count(*) FROM outbox_unconfirmed" + (withCritical ? "" : " WHERE priority <> 1"))) {
      rs.next();
      return rs.getLong(1);
    }
  }

  public Ledger.Report ledger(String probeNodeId) throws Exception {
    List<Ledger.Stored> history = new ArrayList<>();
    for (Object[] r : query("SELECT message_id, device_id, cycle_id, seq FROM $S.device_status_history")) {
      history.add(new Ledger.Stored((String) r[0], (String) r[1], (Long) r[2], (Long) r[3]));
    }
    List<Ledger.Stored> current = new ArrayList<>();
    for (Object[] r : query("SELECT message_id, device_id, cycle_id, seq FROM $S.device_status_current")) {
      current.add(new Ledger.Stored((String) r[0], (String) r[1], (Long) r[2], (Long) r[3]));
    }
    return Ledger.check(produced(probeNodeId), history, current);
  }

  /** Waits until every outbox row is confirmed, the queues are empty and the ledger has lost nothing; says what is left if not. */
  public void awaitDelivered(String probeId, Duration within) {
    try {
      awaitTrue(within, "everything delivered", () -> outboxUnconfirmed(probeId) == 0 && readyTotal() == 0 && ledger(probeId).lost().isEmpty());
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      String state;
      try {
        state = "unconfirmed=" + outboxUnconfirmed(probeId) + " ready=" + readyTotal() + " dead=" + deadLetterCount() + " ledger: " + ledger(probeId);
      } catch (Exception ex) {
        state = "(state unavailable: " + ex + ")";
      }
      throw new AssertionError("not everything delivered within " + within + ": " + state, e);
    }
  }

  /**
   * Stops a probe (it stops inspecting), starts it again with no devices so it replays whatever it left
   * unconfirmed, waits until everything is delivered, and returns the ledger after checking that it
   * balances: nothing lost, duplicated, unexpected or stale, and history holds each result once.
   */
  public Ledger.Report drainAndBalance(Node probe, String probeId, Map<String, String> extra) throws Exception {
    stop(probe);
    Map<String, String> replay = new HashMap<>(extra);
    replay.putAll(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "0"));
    start(replay);
    awaitDelivered(probeId, Duration.ofSeconds(120));
    Ledger.Report r = ledger(probeId);
    org.junit.jupiter.api.Assertions.assertTrue(r.clean(), r.toString());
    org.junit.jupiter.api.Assertions.assertEquals(r.produced() - r.shed().size(), r.stored(), "history holds every result not shed exactly once: " + r);
    return r;
  }

  /** Slot → owner, for slots in state ACTIVE. */
  public Map<Integer, String> activeOwners() throws Exception {
    Map<Integer, String> out = new HashMap<>();
    for (Object[] r : query("SELECT slot_id, owner_worker_id FROM $S.slot_lease WHERE state = 'ACTIVE'")) out.put(((Number) r[0]).intValue(), (String) r[1]);
    return out;
  }

  public String workerState(String id) throws Exception {
    List<Object[]> r = query("SELECT state FROM $S.worker_heartbeat WHERE worker_id = '" + id + "'");
    return r.isEmpty() ? null : (String) r.get(0)[0];
  }

  /**
   * Waits until every slot is ACTIVE with exactly one owner among {@code owners} and each slot queue has
   * exactly one consumer: the state every scenario must end in.
   */
  public void awaitSettled(Collection<String> owners, Duration within) {
    Topology t = topology();
    awaitTrue(within, "every slot ACTIVE on one of " + owners + " with one consumer per queue", () -> {
      Map<Integer, String> o = activeOwners();
      if (o.size() != slots) return false;
      for (String w : o.values()) if (!owners.contains(w)) return false;
      // one channel for every queue: at 256 slots a channel per queue made one look take longer than the wait
      try (Channel ch = amqp().createChannel()) {
        for (int s = 0; s < slots; s++) for (Priority p : Priority.values()) if (ch.queueDeclarePassive(t.queue(s, p)).getConsumerCount() != 1) return false;
      }
      return true;
    });
  }

  /** A request to a node's HTTP API: status and body. */
  public static Map.Entry<Integer, String> http(int port, String method, String path) throws Exception {
    return http(port, method, path, null);
  }

  /** The same with a JSON body ({@code null}: none). */
  public static Map.Entry<Integer, String> http(int port, String method, String path, String json) throws Exception {
    // HTTP/1.1: the request timeout below does not bound the body of an upgraded (h2c) exchange
    HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).header("Authorization", "Bearer " + API_TOKEN);
    b = method.equals("POST") ? b.POST(json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json)) : b.GET();
    HttpResponse<String> r = c.send(b.build(), HttpResponse.BodyHandlers.ofString());
    return Map.entry(r.statusCode(), r.body());
  }

  /** Deliveries the broker marked redelivered, summed over in-process worker nodes. */
  public static double redelivered(Node... workers) {
    double n = 0;
    for (Node w : workers) n += w.metrics().count("worker_redelivered_total");
    return n;
  }

  /** History rows written by one of the given (slot, epoch) owners after a moment: commits by a deposed owner. */
  public long writesByDeposed(Map<Integer, Long> slotEpochs, String after) throws Exception {
    long n = 0;
    for (Map.Entry<Integer, Long> e : slotEpochs.entrySet()) {
      n += queryLong("SELECT count(*) FROM $S.device_status_history WHERE slot_id = " + e.getKey() + " AND writer_epoch = " + e.getValue()
          + " AND received_at > '" + after + "'");
    }
    return n;
  }

  /** Slot → epoch of every slot a worker owns. */
  public Map<Integer, Long> epochsOf(String worker) throws Exception {
    Map<Integer, Long> out = new HashMap<>();
    for (Object[] r : query("SELECT slot_id, lease_epoch FROM $S.slot_lease WHERE owner_worker_id = '" + worker + "'")) {
      out.put(((Number) r[0]).intValue(), ((Number) r[1]).longValue());
    }
    return out;
  }

  /** PostgreSQL's clock, as text for a later comparison in SQL. */
  public String dbNow() throws Exception {
    return (String) query("SELECT now()::text").get(0)[0];
  }

  /**
   * Whether a /metrics text has a sample of {@code name} with all these labels (in any order, among the node and
   * role tags every node adds) and this value.
   */
  public static boolean hasSample(String scrape, String name, String value, String... labels) {
    return scrape.lines().anyMatch(l -> {
      if (!(l.startsWith(name + "{") || l.startsWith(name + " ")) || !l.endsWith(" " + value)) return false;
      for (String label : labels) if (!l.contains(label)) return false;
      return true;
    });
  }

  /** The result of a Vert.x future, waited for at most 60 s (its failure thrown as the cause of an ExecutionException). */
  public static <T> T awaitResult(io.vertx.core.Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  public static void awaitTrue(Duration within, String what, Callable<Boolean> condition) {
    await(what).atMost(within).pollInterval(Duration.ofMillis(100)).ignoreExceptions().until(condition);
  }

  /** As {@link #awaitTrue(Duration, String, Callable)}; on a timeout the error also says what {@code state} reads then (or why it could not). */
  public static void awaitTrue(Duration within, String what, Callable<Boolean> condition, Callable<String> state) {
    try {
      awaitTrue(within, what, condition);
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      String seen;
      try {
        seen = state.call();
      } catch (Exception r) {
        seen = "(cannot read: " + r + ")";
      }
      throw new AssertionError(what + ": not within " + within.toSeconds() + " s; then: " + seen, e);
    }
  }

  @Override
  public void close() throws Exception {
    for (Node n : new ArrayList<>(nodes)) {
      try {
        stop(n);
      } catch (Exception ignored) {
        // best effort: the node may have been broken on purpose
      }
    }
    List<String> prefixes = new ArrayList<>(List.of(name));
    prefixes.addAll(extraTopologies);
    for (String prefix : prefixes) {
      try (Channel ch = amqp().createChannel()) {
        Topology.of(config(Map.of("slots.total", String.valueOf(Math.max(slots, grownTo)), "topology.prefix", prefix))).delete(ch);
      } catch (Exception ignored) {
        // queues may be gone with a broker restart
      }
    }
    try {
      execute("DROP SCHEMA IF EXISTS $S CASCADE");
    } catch (Exception ignored) {
      // database may be down if the test failed mid-outage
    }
    try {
      // the probes' reports (ProbeVerticle writes {redis.channel.prefix}:probes): left behind, every run added a hash
      redisCli(6379, "DEL", name + ":probes");
    } catch (Exception ignored) {
      // no redis-cli, or Redis is down: best effort, as above
    }
    try {
      if (amqp != null) amqp.close();
    } catch (Exception ignored) {
      // already closed
    }
  }
}
