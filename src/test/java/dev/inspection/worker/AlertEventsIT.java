package dev.inspection.worker;

import static dev.inspection.it.TestEnv.awaitResult;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.it.TestEnv;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.state.AlertRules;
import dev.inspection.state.DerivedState;
import dev.inspection.state.PayloadProfiles;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A batch with alert events against a real PostgreSQL whose alert_event table has a partition per day for 60 days, as
 * retention.alert.days keeps them (90 by default): reading the touched alerts' recent events opens only the last days'
 * partitions (the look-back by cycle_id, {@link AlertWrites#READ_EVENTS}), and the alert is still folded from all of them.
 */
class AlertEventsIT {
  /** The scans of alert_event's day partitions before or after (by name) a day; a session's statistics arrive within about 10 s. */
  private static final String SCANS = """
      SELECT coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0) FROM pg_stat_user_tables
      WHERE schemaname = '$S' AND relname LIKE 'alert_event_2%%' AND relname %s 'alert_event_%s'""";
  /** How many of those partitions have been scanned at all. */
  private static final String SCANNED = """
      SELECT count(*) FROM pg_stat_user_tables
      WHERE schemaname = '$S' AND relname LIKE 'alert_event_2%%' AND relname %s 'alert_event_%s' AND seq_scan + coalesce(idx_scan, 0) > 0""";

  @Test
  void aBatchWithAlertEventsReadsOnlyTheLastDaysPartitions() throws Exception {
    try (TestEnv env = new TestEnv(1); AgedSchema db = AgedSchema.open(env)) {
      Pool pool = db.pool();
      LocalDate today = LocalDate.now(ZoneOffset.UTC);
      env.execute("UPDATE $S.slot_lease SET owner_worker_id = 'w', lease_epoch = 1, state = 'ACTIVE'");
      String recent = today.minusDays(10).toString().replace("-", ""); // 7 days of look-back and 2 of slack, and the day it began
      // creating a partition scans it (its index build), and each creating session reports that as it ends: wait until every
      // old partition shows its scan, then count
      long old = AgedSchema.PAST_DAYS + 1 - 10;
      TestEnv.awaitTrue(Duration.ofSeconds(30), "the creation of the " + old + " old partitions counted",
          () -> env.queryLong(String.format(SCANNED, "<", recent)) == old, () -> env.queryLong(String.format(SCANNED, "<", recent)) + " of " + old);
      long oldBefore = env.queryLong(String.format(SCANS, "<", recent));
      long recentBefore = env.queryLong(String.format(SCANS, ">=", recent));
      BatchStore store = new BatchStore(pool, "w");
      // a normal device fails until its offline alert fires; every batch with an event reads the alert's events
      String device = "ae-1";
      Map<String, DerivedState> memory = new HashMap<>();
      long cycle = System.currentTimeMillis() - 60_000;
      int withEvents = 0;
      long maxLocked = 0;
      for (int i = 0; i < 8; i++) {
        Envelope e = new Envelope(Envelope.messageId("n", cycle + i, device, 1), device, 0, 1, 1, 1, "n", cycle + i, 1, Instant.ofEpochMilli(cycle + i),
            Priority.NORMAL, new JsonObject().put("status", i < 6 ? "DOWN" : "UP"));
        StatePlanner.Plan plan = StatePlanner.plan(List.of(e), memory, Map.of(device, new DeviceDirectory.Info(2, PayloadProfiles.DEFAULT, false)),
            AlertRules::forPriority);
        if (!plan.events().isEmpty()) withEvents++;
        awaitResult(store.commit(List.of(new BatchStore.Part(0, 1, plan))));
        memory.putAll(plan.next());
      }
      assertTrue(withEvents >= 2, "the alert fired and resolved: " + withEvents + " batches with events");
      TestEnv.awaitTrue(Duration.ofSeconds(30), "the statistics show the recent partitions read",
          () -> env.queryLong(String.format(SCANS, ">=", recent)) > recentBefore);
      assertEquals(oldBefore, env.queryLong(String.format(SCANS, "<", recent)), "no partition older than 10 days was read");
      List<Object[]> fold = env.query("SELECT state FROM $S.alert_current WHERE device_id = '" + device + "'");
      assertFalse(fold.isEmpty(), "the alert was folded from its events");
      assertEquals(withEvents, env.queryLong("SELECT count(*) FROM $S.alert_event WHERE device_id = '" + device + "'"), "every event stored once");
    }
  }
}
