package dev.inspection.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.Priority;
import dev.inspection.state.HotelRoomPayload;
import dev.inspection.state.PayloadProfile;
import dev.inspection.state.PayloadProfiles;
import dev.inspection.state.RandomPayloads;
import dev.inspection.store.Migrations;
import dev.inspection.worker.MergeWindow;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code merge_payload} of V003 against {@link PayloadProfile#merge} on the real PostgreSQL (DESIGN.md D5): both
 * must give the same JSON for every input, compared parsed, never as text; and frames folded in the worker's merge
 * windows ({@link MergeWindow}) and written once per window end where the SQL merge of every frame ends. Runs in a
 * schema of its own.
 */
class MergeSqlIT {
  private static final PayloadProfile HOTEL = PayloadProfiles.HOTEL_ROOM;
  private static Connection db;
  private static String schema;
  private static PreparedStatement merge;
  private static PreparedStatement guarded;

  @BeforeAll
  static void loadTheFunctionIntoAScratchSchema() throws Exception {
    schema = "merge_it_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    db = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/test", "postgres", "");
    try (Statement st = db.createStatement()) {
      st.execute("CREATE SCHEMA " + schema);
      st.execute("SET search_path TO " + schema);
      for (String file : Migrations.FILES) st.execute(migration(file));
    }
    merge = db.prepareStatement("SELECT merge_payload(?::jsonb, ?::jsonb, ?::jsonb, ?)");
    guarded = db.prepareStatement("SELECT merge_payload_guarded(?::jsonb, ?::jsonb, ?::jsonb, ?, ?)");
  }

  @AfterAll
  static void dropTheSchema() throws Exception {
    if (db == null) return;
    try (Statement st = db.createStatement()) {
      st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    } finally {
      db.close();
    }
  }

  private static String migration(String file) throws Exception {
    try (InputStream in = MergeSqlIT.class.getResourceAsStream("/db/migration/" + file)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** The update through merge_payload_guarded with the profile's device time (as PayloadProfile#merge guards). */
  private static JsonObject sql(JsonObject old, JsonObject upd, PayloadProfile p) throws SQLException {
    return sqlEach(old, List.of(upd), p);
  }

  /** The updates applied one by one by merge_payload_guarded, as the worker's upsert does for a device-time profile. */
  private static JsonObject sqlEach(JsonObject old, List<JsonObject> upds, PayloadProfile p) throws SQLException {
    guarded.setString(1, old == null ? null : old.encode());
    guarded.setString(2, new JsonArray(new ArrayList<>(upds)).encode());
    guarded.setString(3, p.rulesJson().encode());
    guarded.setString(4, p.defaultRule().sqlName());
    guarded.setString(5, p.deviceTimeField());
    try (ResultSet rs = guarded.executeQuery()) {
      rs.next();
      return new JsonObject(rs.getString(1));
    }
  }

  private static JsonObject sql(String old, String upd, String rules, String defaultRule) throws SQLException {
    merge.setString(1, old);
    merge.setString(2, upd);
    merge.setString(3, rules);
    merge.setString(4, defaultRule);
    try (ResultSet rs = merge.executeQuery()) {
      rs.next();
      String json = rs.getString(1);
      return json == null ? null : new JsonObject(json);
    }
  }

  /** Parsed from text on both sides, so what is compared is JSON, not Java number types. */
  private static JsonObject parsed(JsonObject j) {
    return new JsonObject(j.encode());
  }

  @Test
  void theFunctionIsImmutableAndParallelSafe() throws Exception {
    try (Statement st = db.createStatement();
        ResultSet rs = st.executeQuery("SELECT provolatile, proparallel FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
            + "WHERE n.nspname = '" + schema + "' AND p.proname = 'merge_payload'")) {
      assertTrue(rs.next());
      assertEquals("i", rs.getString(1));
      assertEquals("s", rs.getString(2));
    }
  }

  @Test
  void hotelFramesMergedOneByOneInSqlEqualTheInMemoryFoldAtEveryStep() throws Exception {
    Random rnd = new Random(20260425L);
    int steps = 0;
    for (int round = 0; round < 300; round++) {
      List<JsonObject> frames = RandomPayloads.hotelFrames(rnd, 1 + rnd.nextInt(20));
      List<JsonObject> updates = frames.stream().map(HotelRoomPayload::normalize).toList();
      JsonObject inSql = null;
      for (int i = 0; i < updates.size(); i++) {
        inSql = sql(inSql, updates.get(i), HOTEL);
        assertEquals(parsed(HOTEL.fold(updates.subList(0, i + 1))), inSql, "round " + round + " step " + i + ": " + frames.subList(0, i + 1));
        steps++;
      }
    }
    assertTrue(steps > 2000, "steps " + steps);
  }

  @Test
  void theFramesABatchSendsMergedInSqlOntoTheStoredRowEqualTheFramesOneByOne() throws Exception {
    Random rnd = new Random(41);
    for (int round = 0; round < 300; round++) {
      List<JsonObject> updates = RandomPayloads.hotelFrames(rnd, 1 + rnd.nextInt(20)).stream().map(HotelRoomPayload::normalize).toList();
      JsonObject stored = null;
      int i = 0;
      while (i < updates.size()) {
        int end = Math.min(updates.size(), i + 1 + rnd.nextInt(6));
        stored = sqlEach(stored, HOTEL.notOlder(updates.subList(i, end)), HOTEL);
        assertEquals(parsed(HOTEL.fold(updates.subList(0, end))), stored, "round " + round + " after " + end + " updates");
        i = end;
      }
    }
  }

  @Test
  void framesFoldedInMergeWindowsAndWrittenOncePerWindowEqualTheSqlMergeOfEveryFrame() throws Exception {
    // Frames arrive at random gaps with out-of-order ts_ms and duplicates; the worker's merge window (500 ms,
    // hotel_room's default) groups them, and each window is one current write: a first write stores the window's
    // fold, later ones apply its notOlder frames under the device time (as the worker's upsert does).
    Random rnd = new Random(500);
    long[] now = {1_000_000};
    Clock clock = new Clock() {
      @Override public long millis() { return now[0]; }
      @Override public Instant instant() { return Instant.ofEpochMilli(now[0]); }
      @Override public ZoneId getZone() { return ZoneOffset.UTC; }
      @Override public Clock withZone(ZoneId zone) { return this; }
    };
    int frames = 0;
    int writes = 0;
    int duplicates = 0;
    for (int round = 0; round < 100; round++) {
      List<JsonObject> updates = new ArrayList<>();
      for (JsonObject f : RandomPayloads.hotelFrames(rnd, 2 + rnd.nextInt(30))) {
        updates.add(HotelRoomPayload.normalize(f));
        if (rnd.nextInt(5) == 0) {
          updates.add(updates.get(rnd.nextInt(updates.size())).copy()); // a duplicate (a device or gateway that resends)
          duplicates++;
        }
      }
      MergeWindow<JsonObject> window = new MergeWindow<>(200, clock);
      JsonObject windowed = null;
      JsonObject oneByOne = null;
      List<JsonObject> group = new ArrayList<>();
      for (int i = 0; i <= updates.size(); i++) {
        if (i < updates.size()) now[0] += rnd.nextInt(4) == 0 ? 400 + rnd.nextInt(400) : rnd.nextInt(120);
        if (window.dueInMs(i == updates.size()) == 0) { // the window closed (or the last frame: a drain flushes it)
          group = window.take().stream().map(MergeWindow.Held::delivery).toList();
          windowed = windowed == null ? parsed(HOTEL.fold(group)) : sqlEach(windowed, HOTEL.notOlder(group), HOTEL);
          writes++;
        }
        if (i == updates.size()) break;
        window.hold(Priority.NORMAL, updates.get(i), now[0], 500);
        oneByOne = sql(oneByOne, updates.get(i), HOTEL);
        frames++;
      }
      assertEquals(0, window.size());
      assertEquals(oneByOne, windowed, "round " + round + ": the windows' writes equal the frames merged one by one in SQL");
      assertEquals(parsed(HOTEL.fold(updates)), windowed, "round " + round + ": and the in-memory fold of every frame");
    }
    assertTrue(writes < frames / 2, writes + " writes for " + frames + " frames");
    assertTrue(duplicates > 50, "duplicates " + duplicates);
  }

  @Test
  void arbitraryUpdatesUnderEveryRuleAgreeWithTheInMemoryMerge() throws Exception {
    Random rnd = new Random(7);
    for (PayloadProfile p : List.of(RandomPayloads.EVERY_RULE, RandomPayloads.OTHER_DEFAULT, PayloadProfiles.DEFAULT, HOTEL)) {
      for (int round = 0; round < 200; round++) {
        List<JsonObject> updates = new ArrayList<>();
        JsonObject inSql = null;
        for (int i = rnd.nextInt(12); i >= 0; i--) {
          JsonObject u = RandomPayloads.anyUpdate(rnd);
          if (p == HOTEL && rnd.nextBoolean()) u.put(List.of("dev_loops", "ts_ms", "sys_lock_status", "faulty_device_count").get(rnd.nextInt(4)),
              RandomPayloads.anyValue(rnd, 2));
          updates.add(u);
          inSql = sql(inSql, u, p);
          assertEquals(parsed(p.fold(updates)), inSql, p.name() + " round " + round + ": " + updates);
        }
      }
    }
  }

  @Test
  void anOlderFrameWithANewerSeqDoesNotRollTheStoredRowBackInSqlAsInMemory() throws Exception {
    JsonObject newer = HotelRoomPayload.normalize(new JsonObject("""
        {"frame":"0x36","ts_ms":2000,"sys_lock_status":1,"device_list":[{"dev_type":1,"dev_addr":23,"dev_loop":12,"state":"on"}]}"""));
    JsonObject older = HotelRoomPayload.normalize(new JsonObject("""
        {"frame":"0x0F","ts_ms":1000,"sys_lock_status":0,"control_list":[{"dev_type":1,"dev_addr":23,"loop":12,"state":"off"}]}"""));
    JsonObject stored = sql(null, newer, HOTEL);
    assertEquals(parsed(newer), sql(stored, older, HOTEL), "the older frame changes nothing");
    assertEquals(parsed(HOTEL.fold(List.of(newer, older))), sql(stored, older, HOTEL));
    assertEquals(new JsonObject("{\"ts_ms\":2000,\"sys_lock_status\":0,\"dev_loops\":{\"001023012\":{\"state\":\"off\"}}}"),
        sql(stored.encode(), older.encode(), HOTEL.rulesJson().encode(), "replace"), "merge_payload alone would roll the loop and the lock back");
    JsonObject same = older.copy().put("ts_ms", 2000);
    assertEquals("off", sql(stored, same, HOTEL).getJsonObject("dev_loops").getJsonObject("001023012").getString("state"), "a tie is taken");
    assertEquals(parsed(newer), sqlEach(null, List.of(newer, older), HOTEL), "inside one call as across calls");
  }

  @Test
  void everyEdgeCaseOfTheRuleTableAgrees() throws Exception {
    PayloadProfile p = RandomPayloads.EVERY_RULE; // m merge, c coalesce, x max, r and the rest replace
    Map<String, String> cases = new LinkedHashMap<>();
    cases.put("{\"r\":1}", "{\"r\":null}");
    cases.put("{\"m\":{\"a\":1,\"b\":{\"d\":1}}}", "{\"m\":{\"b\":{\"e\":2},\"c\":null}}");
    cases.put("{\"m\":[1]}", "{\"m\":[2]}");
    cases.put("{\"m\":\"a\"}", "{\"m\":\"b\"}");
    cases.put("{\"m\":{\"a\":1}}", "{\"m\":null}");
    cases.put("{\"m\":null}", "{\"m\":{\"a\":1}}");
    cases.put("{\"m\":[1]}", "{\"m\":{\"a\":1}}");
    cases.put("{}", "{\"m\":{\"a\":1}}");
    cases.put("{\"c\":1}", "{\"c\":null}");
    cases.put("{\"c\":null}", "{\"c\":null}");
    cases.put("{\"z\":1}", "{\"c\":null}");
    cases.put("{\"c\":true}", "{\"c\":false}");
    cases.put("{\"x\":5}", "{\"x\":4}");
    cases.put("{\"x\":5}", "{\"x\":5.0}");
    cases.put("{\"x\":1745000000001}", "{\"x\":1745000000000.5}");
    cases.put("{\"x\":9}", "{\"x\":\"late\"}");
    cases.put("{\"x\":\"9\"}", "{\"x\":1}");
    cases.put("{\"x\":9}", "{\"x\":null}");
    cases.put("{\"x\":true}", "{\"x\":1}");
    cases.put("{\"keep\":[1],\"x\":1}", "{}");
    for (Map.Entry<String, String> c : cases.entrySet()) {
      JsonObject old = new JsonObject(c.getKey());
      JsonObject upd = new JsonObject(c.getValue());
      assertEquals(parsed(p.merge(old, upd)), sql(old, upd, p), c.getKey() + " then " + c.getValue());
    }
    assertEquals(new JsonObject("{\"m\":[2]}"), sql(new JsonObject("{\"m\":[1]}"), new JsonObject("{\"m\":[2]}"), p), "no array concatenation");
    assertFalse(sql(new JsonObject(), new JsonObject("{\"c\":null}"), p).containsKey("c"), "an absent coalesce field stays absent");
  }

  @Test
  void noStoredPayloadIsAFirstWriteWhetherSqlNullOrJsonNull() throws Exception {
    JsonObject upd = new JsonObject("{\"ts_ms\":5,\"sys_lock_status\":null,\"dev_loops\":{\"001001001\":{}}}");
    JsonObject expected = parsed(HOTEL.merge(null, upd));
    assertEquals(expected, sql(null, upd, HOTEL));
    assertEquals(expected, sql("null", upd.encode(), HOTEL.rulesJson().encode(), "replace"));
    assertEquals(new JsonObject("{\"a\":1}"), sql("{\"a\":1}", "{}", null, "replace"), "SQL NULL rules: no per-field rules");
  }

  @Test
  void ruleNamesAreCaseInsensitiveInSqlAsInJava() throws Exception {
    assertEquals(new JsonObject("{\"t\":5,\"l\":{\"a\":1,\"b\":2}}"),
        sql("{\"t\":5,\"l\":{\"a\":1}}", "{\"t\":4,\"l\":{\"b\":2}}", "{\"t\":\"MAX\",\"l\":\"Merge\"}", "REPLACE"));
  }

  @Test
  void whatJavaRefusesSqlRefusesWithAnInvalidParameterError() {
    assertRefused("unknown merge rule(s): ts_ms \"greatest\"", "{}", "{\"ts_ms\":1}", "{\"ts_ms\":\"greatest\"}", "replace");
    assertRefused("unknown merge rule(s): default NULL", "{}", "{\"a\":1}", "{}", null);
    assertRefused("unknown merge rule(s): default 'newest'", "{}", "{\"a\":1}", "{}", "newest");
    assertRefused("unknown merge rule(s): a 1", "{}", "{\"a\":1}", "{\"a\":1}", "replace");
    assertRefused("the update must be a JSON object, got SQL NULL", "{}", null, "{}", "replace");
    assertRefused("the update must be a JSON object, got array", "{}", "[1]", "{}", "replace");
    assertRefused("the stored payload must be a JSON object or null, got string", "\"x\"", "{}", "{}", "replace");
    assertRefused("rules must be a JSON object, got array", "{}", "{}", "[]", "replace");
  }

  private static void assertRefused(String message, String old, String upd, String rules, String defaultRule) {
    SQLException e = assertThrows(SQLException.class, () -> sql(old, upd, rules, defaultRule));
    assertEquals("22023", e.getSQLState(), e.getMessage());
    assertTrue(e.getMessage().contains(message), e.getMessage());
  }

  @Test
  void anUpsertOfBatchesKeepsEachDeviceEqualToTheFoldOfAllItsFrames() throws Exception {
    // The shape the worker's upsert of device_status_current takes: one row per device, each with its profile.
    try (Statement st = db.createStatement()) {
      st.execute("CREATE TABLE status_current (device_id TEXT PRIMARY KEY, status_payload JSONB NOT NULL)");
    }
    // As the worker's upsert: a first write stores the batch's fold; a conflict applies the batch's frames not older
    // than each other (PayloadProfile#notOlder) one by one under the device time, which SQL NULL leaves unguarded.
    String upsert = """
        WITH batch AS (SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
                         AS t(device_id, payload, upds, rules, default_rule, time_field))
        INSERT INTO status_current AS c (device_id, status_payload)
        SELECT device_id, payload::jsonb FROM batch
        ON CONFLICT (device_id) DO UPDATE SET status_payload = (SELECT merge_payload_guarded(c.status_payload, b.upds::jsonb, b.rules::jsonb,
          b.default_rule, b.time_field) FROM batch b WHERE b.device_id = EXCLUDED.device_id)""";
    Random rnd = new Random(99);
    Map<String, PayloadProfile> profiles = Map.of("room-1", HOTEL, "room-2", HOTEL, "router-1", PayloadProfiles.DEFAULT);
    Map<String, List<JsonObject>> all = new LinkedHashMap<>();
    try (PreparedStatement ps = db.prepareStatement(upsert)) {
      for (int batch = 0; batch < 40; batch++) {
        List<String> ids = new ArrayList<>();
        List<String> payloads = new ArrayList<>();
        List<String> rules = new ArrayList<>();
        List<String> defaults = new ArrayList<>();
        List<String> upds = new ArrayList<>();
        List<String> times = new ArrayList<>();
        for (Map.Entry<String, PayloadProfile> device : profiles.entrySet()) {
          List<JsonObject> updates = new ArrayList<>();
          for (int i = rnd.nextInt(4); i > 0; i--) {
            updates.add(device.getValue() == HOTEL ? HotelRoomPayload.normalize(RandomPayloads.hotelFrame(rnd, 1_745_000_000_000L + batch * 5_000L))
                : new JsonObject().put("status", rnd.nextBoolean() ? "UP" : "DOWN").put("latency_ms", rnd.nextInt(50)));
          }
          if (updates.isEmpty()) continue;
          all.computeIfAbsent(device.getKey(), k -> new ArrayList<>()).addAll(updates);
          ids.add(device.getKey());
          payloads.add(device.getValue().fold(updates).encode());
          rules.add(device.getValue().rulesJson().encode());
          defaults.add(device.getValue().defaultRule().sqlName());
          upds.add(new JsonArray(new ArrayList<>(device.getValue().notOlder(updates))).encode());
          times.add(device.getValue().deviceTimeField());
        }
        if (ids.isEmpty()) continue;
        ps.setArray(1, db.createArrayOf("text", ids.toArray()));
        ps.setArray(2, db.createArrayOf("text", payloads.toArray()));
        ps.setArray(3, db.createArrayOf("text", upds.toArray()));
        ps.setArray(4, db.createArrayOf("text", rules.toArray()));
        ps.setArray(5, db.createArrayOf("text", defaults.toArray()));
        ps.setArray(6, db.createArrayOf("text", times.toArray()));
        ps.executeUpdate();
      }
    }
    try (Statement st = db.createStatement(); ResultSet rs = st.executeQuery("SELECT device_id, status_payload FROM status_current ORDER BY device_id")) {
      int rows = 0;
      while (rs.next()) {
        String id = rs.getString(1);
        assertEquals(parsed(profiles.get(id).fold(all.get(id))), new JsonObject(rs.getString(2)), id);
        rows++;
      }
      assertEquals(all.size(), rows);
    }
  }
}
