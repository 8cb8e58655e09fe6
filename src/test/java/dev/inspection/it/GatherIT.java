package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitResult;
import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.Topology;
import dev.inspection.outbox.CheckResult;
import dev.inspection.outbox.Outbox;
import dev.inspection.outbox.OutboxPublisher;
import dev.inspection.outbox.OutboxRow;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Gathering while the fleet is behind (issue 11), on the real broker and outbox: with gathering on, a slot's results
 * go as few large messages (by row count, and by time for a few), and once it is off every result goes at once.
 */
class GatherIT {
  private static final long GATHER_MS = 2000;

  @Test
  void behindTheFleetASlotGathersLargeMessagesAndOtherwisePublishesAtOnce() throws Exception {
    try (TestEnv env = new TestEnv(1); PublisherRig rig = new PublisherRig(env, "gather")) {
      Outbox outbox = rig.outbox;
      Context ctx = rig.ctx;
      Connection conn = rig.conn;
      Topology topology = rig.topology;
      Path file = rig.file;
      OutboxPublisher publisher = rig.start(new OutboxPublisher.Settings(20_000, 60_000, 1, 100, 262_144, 50, GATHER_MS, 0, 0), p -> p.gather(true));
      AtomicInteger device = new AtomicInteger();

      // 1. gathering: five appends of 10 results of one slot go as one message once 50 have gathered (without
      //    gathering the first append goes at once, alone)
      for (int i = 0; i < 5; i++) append(ctx, outbox, publisher, 10, device);
      awaitTrue(Duration.ofSeconds(20), "50 rows confirmed", () -> awaitResult(outbox.stats()).depth() == 0);
      List<Integer> sizes = drain(conn, topology.queue(0, Priority.NORMAL), 50);
      System.out.printf("gather: 50 results in 5 appends went as %d messages %s%n", sizes.size(), sizes);
      assertEquals(List.of(50), sizes);

      // 2. gathering, a few results: they wait for the gather time, then go together
      long idAbove = maxId(file);
      append(ctx, outbox, publisher, 3, device);
      awaitTrue(Duration.ofSeconds(20), "3 rows confirmed", () -> awaitResult(outbox.stats()).depth() == 0);
      assertEquals(List.of(3), drain(conn, topology.queue(0, Priority.NORMAL), 3));
      long waited = minWait(file, idAbove);
      assertTrue(waited >= GATHER_MS, "a lone few results waited the gather time (" + waited + " ms) before they were confirmed");

      // 3. not behind any more: every result goes at once, one message each when nothing is unconfirmed
      ctx.runOnContext(v -> publisher.gather(false));
      for (int i = 0; i < 5; i++) {
        append(ctx, outbox, publisher, 1, device);
        awaitTrue(Duration.ofSeconds(10), "row confirmed", () -> awaitResult(outbox.stats()).depth() == 0);
      }
      assertEquals(List.of(1, 1, 1, 1, 1), drain(conn, topology.queue(0, Priority.NORMAL), 5));
    }
  }

  /**
   * A slot's gathered rows, released by an append that also brings rows another slot holds: the held ones count as
   * in flight, so the replayer leaves them to the gate (it took them: every capacity run replayed 300-800 rows that
   * were never lost, and the gate then sent them again).
   */
  @Test
  void rowsHeldByOneAppendThatReleasesAnotherSlotCountAsInFlightAndGoOnce() throws Exception {
    try (TestEnv env = new TestEnv(2); PublisherRig rig = new PublisherRig(env, "held")) {
      // replay at any age: only being in flight keeps a row from the replayer; a gather far longer than the test
      OutboxPublisher publisher = rig.start(new OutboxPublisher.Settings(20_000, 0, 1, 100, 262_144, 50, 600_000, 0, 0), p -> p.gather(true));
      AtomicInteger device = new AtomicInteger();
      append(rig.ctx, rig.outbox, publisher, 40, 0, device);
      // 10 more of slot 0 make its 50 (released with the 40 held before them); the 5 of slot 1 are held
      List<CheckResult> results = results(10, 0, device);
      results.addAll(results(5, 1, device));
      List<OutboxRow> rows = awaitResult(rig.outbox.append(results));
      Promise<java.util.Set<Long>> inFlight = Promise.promise();
      rig.ctx.runOnContext(v -> {
        publisher.rowsAppended(rows);
        inFlight.complete(publisher.inFlightRowIds());
      });
      java.util.Set<Long> ids = awaitResult(inFlight.future());
      for (OutboxRow r : rows.subList(10, 15)) assertTrue(ids.contains(r.id()), "held row " + r.id() + " of slot 1 counts as in flight: " + ids.size() + " in flight");
      awaitTrue(Duration.ofSeconds(20), "slot 0's 50 rows confirmed", () -> awaitResult(rig.outbox.stats()).depth() == 5);

      // a replay pass, then the gathering ends: slot 1's five rows go once, as one message
      rig.ctx.runOnContext(v -> publisher.replay());
      rig.ctx.runOnContext(v -> publisher.gather(false));
      awaitTrue(Duration.ofSeconds(20), "all rows confirmed", () -> awaitResult(rig.outbox.stats()).depth() == 0);
      assertEquals(List.of(50), drain(rig.conn, rig.topology.queue(0, Priority.NORMAL), 50));
      assertEquals(List.of(5), drain(rig.conn, rig.topology.queue(1, Priority.NORMAL), 5));
    }
  }

  /** Appends n results of slot 0 and hands them to the publisher, as the probe does. */
  private static void append(Context ctx, Outbox outbox, OutboxPublisher publisher, int n, AtomicInteger device) throws Exception {
    append(ctx, outbox, publisher, n, 0, device);
  }

  private static void append(Context ctx, Outbox outbox, OutboxPublisher publisher, int n, int slot, AtomicInteger device) throws Exception {
    List<OutboxRow> rows = awaitResult(outbox.append(results(n, slot, device)));
    ctx.runOnContext(v -> publisher.rowsAppended(rows));
  }

  private static List<CheckResult> results(int n, int slot, AtomicInteger device) {
    List<CheckResult> results = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      results.add(new CheckResult("g" + device.incrementAndGet(), slot, Priority.NORMAL, Instant.now(), 0, 1, 1, new JsonObject().put("status", "UP")));
    }
    return results;
  }

  /** The results per message of the queue's messages (v2 carries one, v3 its array), in queue order, until {@code results} have come. */
  private static List<Integer> drain(Connection conn, String queue, int results) throws Exception {
    List<Integer> sizes = new CopyOnWriteArrayList<>();
    try (Channel ch = conn.createChannel()) {
      String tag = ch.basicConsume(queue, true, (t, d) -> sizes.add(new String(d.getBody(), StandardCharsets.UTF_8).split("\"message_id\"", -1).length - 1), t -> {});
      awaitTrue(Duration.ofSeconds(20), results + " results consumed", () -> sizes.stream().mapToInt(Integer::intValue).sum() >= results);
      ch.basicCancel(tag);
    }
    return List.copyOf(sizes);
  }

  private static long maxId(Path file) throws Exception {
    return query(file, "SELECT coalesce(max(id), 0) FROM outbox");
  }

  private static long minWait(Path file, long idAbove) throws Exception {
    return query(file, "SELECT min(c.confirmed_at - o.created_at) FROM outbox o JOIN outbox_confirmed c ON c.id = o.id WHERE o.id > " + idAbove);
  }

  private static long query(Path file, String sql) throws Exception {
    try (java.sql.Connection db = DriverManager.getConnection("jdbc:sqlite:" + file); Statement st = db.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
