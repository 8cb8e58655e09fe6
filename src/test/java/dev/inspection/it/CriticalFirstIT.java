package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitResult;
import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.Priority;
import dev.inspection.outbox.CheckResult;
import dev.inspection.outbox.Outbox;
import dev.inspection.outbox.OutboxPublisher;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Critical rows first (issue 12): a probe whose outbox holds a backlog of normal results publishes the
 * critical results behind it before the backlog, on the real broker, with a small in-flight window so
 * the backlog takes many rounds.
 */
class CriticalFirstIT {
  private static final int NORMAL = 20_000;
  private static final int CRITICAL = 40;

  @Test
  void criticalRowsBehindANormalBacklogAreConfirmedBeforeMostOfIt() throws Exception {
    try (TestEnv env = new TestEnv(2); PublisherRig rig = new PublisherRig(env, "critical-first")) {
      Outbox outbox = rig.outbox;
      // the backlog first (ids 1..20,000), then two critical devices' results (the highest ids)
      awaitResult(outbox.append(results("n", NORMAL, Priority.NORMAL, 0)));
      awaitResult(outbox.append(results("c", CRITICAL, Priority.HIGH, 1)));

      rig.start(new OutboxPublisher.Settings(100, 60_000, 1, 1, 262_144, 1, 0, 0, 0), p -> {});
      awaitTrue(Duration.ofSeconds(120), "every row confirmed", () -> awaitResult(outbox.stats()).depth() == 0);

      long[] byPriority = confirmedBeforeLastCritical(rig.file);
      System.out.printf("critical first: %d critical rows confirmed, %d of %d normal rows confirmed before the last of them%n", byPriority[1],
          byPriority[0], NORMAL);
      assertEquals(CRITICAL, byPriority[1]);
      assertTrue(byPriority[0] < NORMAL / 4, "the critical rows waited behind " + byPriority[0] + " of " + NORMAL + " normal rows");
      assertEquals(NORMAL, env.ready(0, Priority.NORMAL), "the whole backlog reached its queue as well");
      assertEquals(CRITICAL, env.ready(1, Priority.HIGH));
    }
  }

  private static List<CheckResult> results(String prefix, int n, Priority priority, int slot) {
    List<CheckResult> out = new ArrayList<>(n);
    Instant at = Instant.now();
    // a few devices, several results each: their rows must keep seq order within the device
    for (int i = 0; i < n; i++) {
      out.add(new CheckResult(prefix + (i % 4), slot, priority, at.plusMillis(i), 0, 1, 1, new JsonObject().put("status", "UP").put("i", i)));
    }
    return out;
  }

  /** {normal rows confirmed before the last critical row, critical rows confirmed}. */
  private static long[] confirmedBeforeLastCritical(Path file) throws Exception {
    try (java.sql.Connection db = DriverManager.getConnection("jdbc:sqlite:" + file); Statement st = db.createStatement();
         ResultSet rs = st.executeQuery("""
             WITH c AS (SELECT o.priority, c.confirmed_at FROM outbox o JOIN outbox_confirmed c ON c.id = o.id)
             SELECT (SELECT count(*) FROM c WHERE priority = 2 AND confirmed_at < (SELECT max(confirmed_at) FROM c WHERE priority = 1)),
                    (SELECT count(*) FROM c WHERE priority = 1)""")) {
      rs.next();
      return new long[] {rs.getLong(1), rs.getLong(2)};
    }
  }

}
