package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static dev.inspection.it.TestEnv.http;
import static dev.inspection.it.TestEnv.publish;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.Channel;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.SlotHash;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import dev.inspection.node.Node;
import dev.inspection.state.HotelRoomPayload;
import dev.inspection.state.PayloadProfiles;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 4 on the real services: derived state that survives a takeover, alerts derived from events,
 * rollups that never double count, merge profiles, and retention by partition.
 */
class DeviceStateIT {
  private static final String NODE = "it-probe";

  private static Envelope check(String device, int slots, long cycle, long seq, Priority p, JsonObject payload) {
    return new Envelope(Envelope.messageId(NODE, cycle, device, seq), device, SlotHash.slotOf(device, slots), 1, 1, 1, NODE, cycle, seq,
        Instant.ofEpochMilli(cycle), p, payload);
  }

  private static Envelope status(String device, int slots, long cycle, long seq, Priority p, String st) {
    return check(device, slots, cycle, seq, p, new JsonObject().put("status", st));
  }

  private static void publishAll(Channel ch, Topology t, List<Envelope> all) throws Exception {
    for (Envelope e : all) publish(ch, t, e);
    ch.waitForConfirmsOrDie(30_000);
  }

  private static long history(TestEnv env, String device) throws Exception {
    return env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id = '" + device + "'");
  }

  /** One worker holding every slot, and a confirming publisher channel: the set-up most tests here share. */
  private static Node oneWorker(TestEnv env, Channel ch) throws Exception {
    ch.confirmSelect();
    Node w = env.start(Map.of("role", "worker", "node.id", env.name + "-w1"));
    env.awaitSettled(Set.of(env.name + "-w1"), Duration.ofSeconds(20));
    return w;
  }

  /**
   * The old owner writes its snapshots in the first layout (as a build before the compact layout does, or one set to
   * {@code worker.snapshot.layout=v1} in a rolling upgrade) and the new owner, writing the compact layout, reads them.
   */
  @Test
  void takeoverInTheMiddleOfADebounceFiresOnExactlyTheCheckWhereTheOldOwnerWould() throws Exception {
    try (TestEnv env = new TestEnv(2); Channel ch = env.channel()) {
      Topology t = env.topology();
      String w1 = env.name + "-w1";
      String w2 = env.name + "-w2";
      ch.confirmSelect();
      env.start(Map.of("role", "worker", "node.id", w1, "worker.snapshot.layout", "v1"));
      env.awaitSettled(Set.of(w1), Duration.ofSeconds(20));
      String dev = "debounce-1";
      long base = System.currentTimeMillis() - 60_000;
      // normal priority: device.offline fires on the 5th consecutive failure; the old owner sees 3
      List<Envelope> first = new ArrayList<>();
      first.add(status(dev, 2, base, 1, Priority.NORMAL, "UP"));
      for (int s = 2; s <= 4; s++) first.add(status(dev, 2, base + s * 1000, s, Priority.NORMAL, "DOWN"));
      publishAll(ch, t, first);
      awaitTrue(Duration.ofSeconds(20), "old owner committed 4 results", () -> history(env, dev) == 4);
      assertEquals(3, env.queryLong("SELECT (derived_snapshot->>'consec_failure_count')::int FROM $S.device_status_current WHERE device_id = '"
          + dev + "' AND derived_snapshot->>'v' = '1'"), "the debounce state is in the database, not only in memory");

      env.start(Map.of("role", "worker", "node.id", w2, "worker.warmup.ms", "0"));
      awaitTrue(Duration.ofSeconds(20), "w2 ACTIVE", () -> "ACTIVE".equals(env.workerState(w2)));
      assertEquals(202, http(env.scheduler().httpPort(), "POST", "/api/v1/workers/" + w1 + "/drain").getKey());
      env.awaitSettled(Set.of(w2), Duration.ofSeconds(30));

      publishAll(ch, t, List.of(status(dev, 2, base + 5000, 5, Priority.NORMAL, "DOWN")));
      awaitTrue(Duration.ofSeconds(20), "4th failure committed by the new owner", () -> history(env, dev) == 5);
      // the compact layout (worker.snapshot.layout's default): n is the consecutive failures
      assertEquals(4, env.queryLong("SELECT (derived_snapshot->>'n')::int FROM $S.device_status_current WHERE device_id = '"
          + dev + "' AND derived_snapshot->>'v' = '2'"), "the new owner went on from the old owner's snapshot");
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.alert_event WHERE device_id = '" + dev + "'"), "not earlier");
      publishAll(ch, t, List.of(status(dev, 2, base + 6000, 6, Priority.NORMAL, "DOWN")));
      awaitTrue(Duration.ofSeconds(20), "5th failure committed", () -> history(env, dev) == 6);
      List<Object[]> fired = env.query("SELECT alert_key, event_type, seq FROM $S.alert_event WHERE device_id = '" + dev + "'");
      assertEquals(1, fired.size(), "exactly one event");
      assertEquals("device.offline", fired.get(0)[0]);
      assertEquals("FIRING", fired.get(0)[1]);
      assertEquals(6L, ((Number) fired.get(0)[2]).longValue(), "fired on the 5th failure, as the old owner would have");
      assertEquals("ACTIVE", env.query("SELECT state FROM $S.alert_current WHERE device_id = '" + dev + "'").get(0)[0]);
    }
  }

  /**
   * A worker that drops a slot it still owns (its lease reads failed for a lease's time, or a batch found the lease
   * gone) and takes it up again when the next read shows it ACTIVE loads the slot's derived state again (INV-10): the
   * debounce goes on where it stood. Consuming it straight away started every device's counters again.
   */
  @Test
  void aSlotDroppedAndTakenUpAgainByItsOwnerLoadsItsDebounceStateAgain() throws Exception {
    try (TestEnv env = new TestEnv(2); Channel ch = env.channel()) {
      Topology t = env.topology();
      Node w = oneWorker(env, ch);
      String dev = "debounce-2";
      int slot = SlotHash.slotOf(dev, 2);
      long base = System.currentTimeMillis() - 60_000;
      List<Envelope> first = new ArrayList<>();
      first.add(status(dev, 2, base, 1, Priority.NORMAL, "UP"));
      for (int s = 2; s <= 5; s++) first.add(status(dev, 2, base + s * 1000, s, Priority.NORMAL, "DOWN"));
      publishAll(ch, t, first);
      awaitTrue(Duration.ofSeconds(20), "4 failures committed", () -> history(env, dev) == 5);

      Metrics m = w.metrics();
      double gained = m.count("worker_lease_changes_total", "kind", "gained");
      long epoch = w.worker().heldSlots().get(slot);
      w.worker().leases().forget(slot, epoch);
      awaitTrue(Duration.ofSeconds(20), "slot " + slot + " dropped and taken up again",
          () -> m.count("worker_lease_changes_total", "kind", "lost") >= 1 && m.count("worker_lease_changes_total", "kind", "gained") > gained);
      assertEquals(epoch, w.worker().heldSlots().get(slot), "the same lease: nothing moved");

      publishAll(ch, t, List.of(status(dev, 2, base + 6000, 6, Priority.NORMAL, "DOWN")));
      awaitTrue(Duration.ofSeconds(20), "5th failure committed", () -> history(env, dev) == 6);
      List<Object[]> fired = env.query("SELECT event_type, seq FROM $S.alert_event WHERE device_id = '" + dev + "' AND alert_key = 'device.offline'");
      assertEquals(1, fired.size(), "device.offline fired: the counter went on from 4, it did not start again");
      assertEquals(6L, ((Number) fired.get(0)[1]).longValue());
    }
  }

  @Test
  void aFiringOnTheHighQueueAndANewerStatusOnTheNormalQueueInReverseOrderLeaveTheAlertActive() throws Exception {
    try (TestEnv env = new TestEnv(2); Channel ch = env.channel()) {
      Topology t = env.topology();
      oneWorker(env, ch);
      String dev = "reorder-1";
      long base = System.currentTimeMillis() - 60_000;
      List<Envelope> lead = new ArrayList<>();
      for (int s = 1; s <= 4; s++) lead.add(status(dev, 2, base + s * 1000, s, Priority.NORMAL, "DOWN"));
      publishAll(ch, t, lead);
      awaitTrue(Duration.ofSeconds(20), "4 failures committed", () -> history(env, dev) == 4);
      // seed 000 §3.3: the newer result (cycle 11) arrives first on the normal queue, the older one that
      // completes the outage (cycle 10) later on the high queue
      publishAll(ch, t, List.of(status(dev, 2, base + 11_000, 11, Priority.NORMAL, "DOWN")));
      awaitTrue(Duration.ofSeconds(20), "newer committed", () -> history(env, dev) == 5);
      publishAll(ch, t, List.of(status(dev, 2, base + 10_000, 10, Priority.HIGH, "DOWN")));
      awaitTrue(Duration.ofSeconds(20), "older committed to history", () -> history(env, dev) == 6);
      assertEquals("ACTIVE", env.query("SELECT state FROM $S.alert_current WHERE device_id = '" + dev + "' AND alert_key = 'device.offline'")
          .get(0)[0], "the alert stays active whatever the order");
      assertEquals(11L, env.queryLong("SELECT seq FROM $S.device_status_current WHERE device_id = '" + dev + "'"), "current keeps the newest");
    }
  }

  /**
   * Issue 11: a day of results, then the same day again, under one history policy. Returns what history holds
   * (its row count and message ids) and, apart, everything derived from the results (alert events, current
   * alerts, rollups, current rows with their derived state), each after the replay, asserting that the replay
   * changed neither.
   */
  private static String[] dayTwice(String policy, long end) throws Exception {
    try (TestEnv env = new TestEnv(4); Channel ch = env.channel()) {
      Topology t = env.topology();
      ch.confirmSelect();
      Node w = env.start(Map.of("role", "worker", "node.id", env.name + "-w1", "history.policy", policy, "history.heartbeat.ms", "3600000"));
      env.awaitSettled(Set.of(env.name + "-w1"), Duration.ofSeconds(20));
      long start = end - Duration.ofHours(24).toMillis();
      Random rnd = new Random(42);
      List<Envelope> day = new ArrayList<>();
      String[] devices = {"day-steady", "day-outages", "day-flapping", "day-random"};
      for (String d : devices) {
        long seq = 0;
        for (long at = start; at < end; at += 120_000) { // every 2 minutes for a day: 720 results per device
          seq++;
          boolean up = switch (d) {
            case "day-steady" -> true;
            case "day-outages" -> (seq / 40) % 3 != 2; // 40-result outages
            case "day-flapping" -> seq % 2 == 0 || seq < 100;
            default -> rnd.nextDouble() > 0.3;
          };
          // latency jitters on every result: under "changes" it is not a change (history.ignored.fields)
          day.add(check(d, 4, at, seq, Priority.NORMAL, new JsonObject().put("status", up ? "UP" : "DOWN").put("latency_ms", rnd.nextInt(50))));
        }
      }
      publishAll(ch, t, day);
      awaitTrue(Duration.ofSeconds(90), "a day of results committed", () -> committed(w) >= day.size() && env.readyTotal() == 0);
      String[] before = {history(env), derived(env)};
      double consumed = committed(w);

      publishAll(ch, t, day); // the same day again: a replay
      awaitTrue(Duration.ofSeconds(90), "the replay was processed and acked", () -> committed(w) >= consumed + day.size() && env.readyTotal() == 0);
      assertEquals(before[0], history(env), policy + ": history is identical after the replay");
      assertSame(before[1], derived(env), policy + ": alert events, current alerts, rollups and derived state are identical after the replay");
      assertTrue(env.queryLong("SELECT count(*) FROM $S.alert_event WHERE device_id = 'day-outages' AND event_type = 'FIRING'") >= 5,
          "the outages fired");
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.alert_event WHERE device_id = 'day-steady'"));
      assertEquals(1, env.queryLong("SELECT count(*) FROM $S.alert_event WHERE device_id = 'day-flapping' AND alert_key = 'device.flapping'"
          + " AND event_type = 'FIRING'"), "one flapping state, no storm");
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.alert_event WHERE device_id = 'day-flapping' AND alert_key = 'device.offline'"
          + " AND seq > 100"), "no offline firings while flapping");
      assertEquals(day.size(), env.queryLong("SELECT sum(sample_count) FROM $S.device_status_rollup_1m"), "every result counted once");
      return new String[] {Long.toString(env.queryLong("SELECT count(*) FROM $S.device_status_history")), before[1]};
    }
  }

  private static double committed(Node w) {
    double n = 0;
    for (int s = 0; s < 4; s++) n += w.metrics().count("worker_committed_total", "slot", Integer.toString(s));
    return n;
  }

  @Test
  void replayingADaysMessagesTwiceUnderEitherHistoryPolicyLeavesEverythingIdenticalAndDerivesTheSame() throws Exception {
    long end = System.currentTimeMillis() - 60_000; // the same day under both policies
    String[] every = dayTwice("every", end);
    String[] changes = dayTwice("changes", end);
    assertEquals(2880, Long.parseLong(every[0]), "every result in history");
    long kept = Long.parseLong(changes[0]);
    assertTrue(kept < 2880 / 2 && kept >= 24, "changes keeps the changes and an hourly heartbeat: " + kept + " rows");
    System.out.printf("history rows for a day of 2,880 results: every %d, changes %d (%.1f %%)%n", 2880, kept, 100.0 * kept / 2880);
    assertSame(every[1], changes[1], "alert events, current alerts, rollups and derived state do not depend on the history policy");
  }

  /** Equal long texts; on a difference, shows where (the texts themselves run to megabytes). */
  private static void assertSame(String expected, String actual, String what) {
    if (expected.equals(actual)) return;
    int i = 0;
    while (i < Math.min(expected.length(), actual.length()) && expected.charAt(i) == actual.charAt(i)) i++;
    int from = Math.max(0, i - 300);
    assertEquals(expected.substring(from, Math.min(expected.length(), i + 300)), actual.substring(from, Math.min(actual.length(), i + 300)),
        what + " (first difference at character " + i + ")");
  }

  private static String history(TestEnv env) throws Exception {
    return env.query("SELECT count(*), sum(hashtext(message_id)::bigint) FROM $S.device_status_history").get(0)[0] + "/"
        + env.query("SELECT sum(hashtext(message_id)::bigint) FROM $S.device_status_history").get(0)[0];
  }

  private static String derived(TestEnv env) throws Exception {
    StringBuilder sb = new StringBuilder();
    for (Object[] r : env.query("SELECT device_id, alert_key, event_type, severity, cycle_id, seq FROM $S.alert_event ORDER BY 1, 2, 5, 6")) {
      sb.append(Arrays.toString(r));
    }
    for (Object[] r : env.query("SELECT device_id, alert_key, state, severity, first_fired_at, last_event_at FROM $S.alert_current ORDER BY 1, 2")) {
      sb.append(Arrays.toString(r));
    }
    for (Object[] r : env.query("SELECT minute_bucket, device_id, sample_count, down_count, state_changes, last_state, last_payload::text,"
        + " last_seq FROM $S.device_status_rollup_1m ORDER BY 1, 2")) {
      sb.append(Arrays.toString(r));
    }
    for (Object[] r : env.query("SELECT device_id, seq, status_payload::text, derived_snapshot::text FROM $S.device_status_current ORDER BY 1")) {
      sb.append(Arrays.toString(r));
    }
    return sb.toString();
  }

  @Test
  void hotelRoomPayloadsMergeInTheDatabaseLikeTheReferenceFold() throws Exception {
    try (TestEnv env = new TestEnv(2); Channel ch = env.channel()) {
      Topology t = env.topology();
      oneWorker(env, ch);
      String dev = "room-1201";
      String body = new JsonArray().add(new JsonObject().put("device_id", dev).put("check_type", "sim").put("payload_profile", "hotel_room")
          .put("interval_ms", 10_000)).encode();
      HttpResponse<String> imported = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + env.scheduler().httpPort() + "/api/v1/devices/import")).header("Authorization", "Bearer " + TestEnv.API_TOKEN)
          .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, imported.statusCode(), imported.body());

      long base = System.currentTimeMillis() - 60_000;
      List<JsonObject> raw = new ArrayList<>();
      raw.add(new JsonObject().put("frame", "0x36").put("ts_ms", base + 1).put("sys_lock_status", 1)
          .put("device_list", new JsonArray().add(loop(1, 23, 12, "on")).add(loop(2, 5, 1, "off")))
          .put("fault_list", new JsonArray().add(new JsonObject().put("dev_type", 2).put("code", 7))));
      raw.add(new JsonObject().put("frame", "0x0F").put("ts_ms", base + 2).put("control_list", new JsonArray()
          .add(new JsonObject().put("dev_type", 1).put("dev_addr", 23).put("loop", 12).put("state", "off"))));
      raw.add(new JsonObject().put("frame", "0x36").put("ts_ms", base + 3).putNull("sys_lock_status")
          .put("device_list", new JsonArray().add(loop(3, 1, 1, "dim"))).put("fault_list", new JsonArray()));
      raw.add(new JsonObject().put("frame", "0x0F").put("ts_ms", base + 4).put("control_list", new JsonArray().add(loop(2, 5, 1, "on"))));
      List<Envelope> inOrder = new ArrayList<>();
      for (int i = 0; i < raw.size(); i++) inOrder.add(check(dev, 2, base + 10 + i, i + 2, Priority.NORMAL, raw.get(i)));
      // several updates of one device in one batch, then an older update that arrives last
      publishAll(ch, t, inOrder);
      awaitTrue(Duration.ofSeconds(20), "four updates committed", () -> history(env, dev) == 4);
      JsonObject late = new JsonObject().put("frame", "0x36").put("ts_ms", base).put("sys_lock_status", 0)
          .put("device_list", new JsonArray().add(loop(9, 9, 9, "stale")));
      publishAll(ch, t, List.of(check(dev, 2, base + 5, 1, Priority.NORMAL, late)));
      awaitTrue(Duration.ofSeconds(20), "the older update reached history", () -> history(env, dev) == 5);

      List<JsonObject> normalized = new ArrayList<>();
      for (JsonObject r : raw) normalized.add(HotelRoomPayload.normalize(r));
      JsonObject expected = PayloadProfiles.HOTEL_ROOM.fold(normalized);
      JsonObject stored = new JsonObject((String) env.query("SELECT status_payload::text FROM $S.device_status_current WHERE device_id = '"
          + dev + "'").get(0)[0]);
      assertEquals(expected, stored, "database merge = reference fold; the older update did not win");
      assertEquals(1, stored.getInteger("sys_lock_status"), "a null sys_lock_status kept the old value");
      assertEquals("off", stored.getJsonObject("dev_loops").getJsonObject("001023012").getString("state"), "0x0F merged into dev_loops");
      assertFalse(stored.getJsonObject("dev_loops").containsKey("009009009"), "the older update never won");
      assertEquals(new JsonArray(), stored.getValue(HotelRoomPayload.FAULTS), "fault list replaced");

      // issue 13 item 3: a frame older by device time that arrives later with a NEWER probe seq changes nothing
      JsonObject olderTime = new JsonObject().put("frame", "0x0F").put("ts_ms", base + 3).put("sys_lock_status", 0)
          .put("control_list", new JsonArray().add(new JsonObject().put("dev_type", 1).put("dev_addr", 23).put("loop", 12).put("state", "on")));
      publishAll(ch, t, List.of(check(dev, 2, base + 20, 10, Priority.NORMAL, olderTime)));
      awaitTrue(Duration.ofSeconds(20), "the older-by-device-time frame reached history", () -> history(env, dev) == 6);
      Object[] row = env.query("SELECT status_payload::text, seq FROM $S.device_status_current WHERE device_id = '" + dev + "'").get(0);
      assertEquals(stored, new JsonObject((String) row[0]), "dev_loops, sys_lock_status and ts_ms did not go back");
      assertEquals(10L, ((Number) row[1]).longValue(), "the row's seq still moved on");
    }
  }

  private static JsonObject loop(int type, int addr, int loop, String state) {
    return new JsonObject().put("dev_type", type).put("dev_addr", addr).put("dev_loop", loop).put("state", state);
  }

  @Test
  void partitionsAreCreatedAheadAndOldOnesDroppedWithoutAnyDelete() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      Node sched = env.start(Map.of("role", "scheduler", "node.id", env.name + "-sched", "retention.ahead.days", "5"));
      LocalDate today = LocalDate.now(ZoneOffset.UTC);
      String ahead = "device_status_history_c2_" + today.plusDays(5).format(DateTimeFormatter.BASIC_ISO_DATE);
      awaitTrue(Duration.ofSeconds(20), "partitions 5 days ahead", () -> env.queryLong(
          "SELECT count(*) FROM pg_tables WHERE schemaname = '$S' AND tablename = '" + ahead + "'") == 1);
      // an expired day with rows, as if the platform had run for two months
      long old = today.minusDays(60).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
      env.execute("CREATE TABLE $S.device_status_history_c2_old PARTITION OF $S.device_status_history_c2 FOR VALUES FROM (" + old + ") TO ("
          + (old + 86_400_000L) + ")");
      env.execute("ALTER TABLE $S.device_status_history_c2_old RENAME TO device_status_history_c2_"
          + today.minusDays(60).format(DateTimeFormatter.BASIC_ISO_DATE));
      env.execute("INSERT INTO $S.device_status_history (device_id, cycle_id, seq, retention_class, slot_id, collected_at, writer_epoch, message_id,"
          + " status_payload) VALUES ('old-dev', " + (old + 1000) + ", 1, 2, 0, now() - interval '60 days', 1, 'x:1:old-dev:1', '{}')");
      String kept = "device_status_history_c1_" + today.minusDays(25).format(DateTimeFormatter.BASIC_ISO_DATE);
      long keptLo = today.minusDays(25).atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
      env.execute("CREATE TABLE $S." + kept + " PARTITION OF $S.device_status_history_c1 FOR VALUES FROM (" + keptLo + ") TO ("
          + (keptLo + 86_400_000L) + ")");

      sched.scheduler().retention().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertEquals(0, env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id = 'old-dev'"), "the expired day is gone");
      assertEquals(0, env.queryLong("SELECT count(*) FROM pg_tables WHERE schemaname = '$S' AND tablename LIKE 'device_status_history_c2_"
          + today.minusDays(60).format(DateTimeFormatter.BASIC_ISO_DATE) + "'"), "dropped as a partition");
      assertEquals(1, env.queryLong("SELECT count(*) FROM pg_tables WHERE schemaname = '$S' AND tablename = '" + kept + "'"),
          "25 days old is within the 30 days of critical devices");
      assertEquals(0, env.queryLong("SELECT coalesce(sum(n_tup_del), 0) FROM pg_stat_user_tables WHERE schemaname = '$S'"
          + " AND relname LIKE 'device_status_history%'"), "no row was ever DELETEd from history");
      assertTrue(sched.metrics().count("retention_partitions_dropped_total") >= 1);
    }
  }

  @Test
  void alertsAndRollupsAreReadThroughTheApi() throws Exception {
    try (TestEnv env = new TestEnv(2); Channel ch = env.channel()) {
      Topology t = env.topology();
      oneWorker(env, ch);
      String dev = "api-dev";
      long base = Instant.now().truncatedTo(ChronoUnit.MINUTES).minus(Duration.ofMinutes(10)).toEpochMilli();
      List<Envelope> all = new ArrayList<>();
      for (int s = 1; s <= 6; s++) all.add(status(dev, 2, base + s * 1000, s, Priority.HIGH, "DOWN"));
      publishAll(ch, t, all);
      awaitTrue(Duration.ofSeconds(20), "committed", () -> history(env, dev) == 6);
      int port = env.scheduler().httpPort();
      JsonObject alerts = new JsonObject(http(port, "GET", "/api/v1/alerts?device=" + dev).getValue());
      assertEquals(1, alerts.getJsonArray("alerts").size(), alerts.encode());
      assertEquals(4, alerts.getJsonArray("alerts").getJsonObject(0).getInteger("severity"), "critical device (high queue): CRITICAL");
      assertEquals(400, http(port, "GET", "/api/v1/alerts?state=maybe").getKey());
      JsonObject rollups = new JsonObject(http(port, "GET", "/api/v1/devices/" + dev + "/rollups?from="
          + Instant.ofEpochMilli(base).minusSeconds(60) + "&to=" + Instant.now()).getValue());
      assertEquals(6, rollups.getJsonArray("minutes").getJsonObject(0).getInteger("samples"), rollups.encode());
      assertEquals(400, http(port, "GET", "/api/v1/devices/" + dev + "/rollups?from=yesterday").getKey());
      JsonObject detail = new JsonObject(http(port, "GET", "/api/v1/devices/" + dev).getValue());
      // stored compact, shown with its members named in full
      assertEquals(6, detail.getJsonObject("current").getJsonObject("derived").getInteger("consec_failure_count"), detail.encode());
      assertEquals("HARD_DOWN", detail.getJsonObject("current").getJsonObject("derived").getString("offline_state"), detail.encode());
      assertEquals(6, detail.getJsonArray("history").size());
      JsonObject events = new JsonObject(http(port, "GET", "/api/v1/devices/" + dev + "/alerts").getValue());
      assertEquals("FIRING", events.getJsonArray("events").getJsonObject(0).getString("type"));
    }
  }
}
