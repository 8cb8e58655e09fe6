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

  /** Appends n results of slot 0 and hands them to the publisher, as the probe does. */
  private static void append(Context ctx, Outbox outbox, OutboxPublisher publisher, int n, AtomicInteger device) throws Exception {
    List<CheckResult> results = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      results.add(new CheckResult("g" + device.incrementAndGet(), 0, Priority.NORMAL, Instant.now(), 0, 1, 1, new JsonObject().put("status", "UP")));
    }
    List<OutboxRow> rows = awaitResult(outbox.append(results));
    ctx.runOnContext(v -> publisher.rowsAppended(rows));
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
    return query(file, "SELECT min(confirmed_at - created_at) FROM outbox WHERE id > " + idAbove);
  }

  private static long query(Path file, String sql) throws Exception {
    try (java.sql.Connection db = DriverManager.getConnection("jdbc:sqlite:" + file); Statement st = db.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
