package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.state.AlertRules;
import dev.inspection.state.DerivedState;
import dev.inspection.state.HistoryPolicies;
import dev.inspection.state.PayloadProfiles;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StatePlannerTest {
  private static Envelope e(String d, long seq, Priority p, JsonObject payload) {
    return new Envelope(Envelope.messageId("n", 1000 + seq, d, seq), d, 0, 1, 1, 1, "n", 1000 + seq, seq, Instant.ofEpochMilli(1000 + seq), p, payload);
  }

  private static Map<String, DeviceDirectory.Info> infos(String... ids) {
    Map<String, DeviceDirectory.Info> m = new HashMap<>();
    for (String id : ids) m.put(id, new DeviceDirectory.Info(2, PayloadProfiles.DEFAULT, true));
    return m;
  }

  @Test
  void onePerDeviceRowWithTheNewestResultEveryResultInHistoryAndTheOfflineAlertOnTheFifthFailure() {
    List<Envelope> batch = new ArrayList<>();
    for (long s = 5; s >= 1; s--) batch.add(e("d1", s, Priority.NORMAL, new JsonObject().put("status", "DOWN")));
    batch.add(e("d2", 1, Priority.HIGH, new JsonObject().put("status", "UP")));
    StatePlanner.Plan p = StatePlanner.plan(batch, new HashMap<>(), infos("d1", "d2"), AlertRules::forPriority);
    assertEquals(2, p.current().size());
    assertEquals(5, p.current().stream().filter(c -> c.newest().deviceId().equals("d1")).findFirst().orElseThrow().newest().seq(),
        "results are folded in (cycle_id, seq) order, whatever order they came in");
    assertEquals(6, p.history().size());
    assertEquals(1, p.history().stream().filter(h -> h.envelope().deviceId().equals("d2")).findFirst().orElseThrow().retentionClass(),
        "the high queue's results keep the critical retention");
    assertEquals(1, p.events().size());
    assertEquals(5, p.events().get(0).seq());
    assertEquals(5, p.next().get("d1").consecFailures());
    assertTrue(p.rejected().isEmpty());
  }

  @Test
  void memoryIsNotTouchedByPlanningOnlyByTheCallerAfterCommit() {
    Map<String, DerivedState> memory = new HashMap<>();
    StatePlanner.plan(List.of(e("d1", 1, Priority.NORMAL, new JsonObject().put("status", "DOWN"))), memory, infos("d1"), AlertRules::forPriority);
    assertTrue(memory.isEmpty());
  }

  @Test
  void aResultWithoutAnUpOrDownStatusIsStoredButFeedsNoDerivedState() {
    StatePlanner.Plan p = StatePlanner.plan(List.of(e("d1", 1, Priority.NORMAL, new JsonObject().put("status", "DEGRADED"))), new HashMap<>(),
        infos("d1"), AlertRules::forPriority);
    assertEquals(1, p.history().size());
    DerivedState d = DerivedState.fromJson(new JsonObject(p.current().get(0).derived()));
    assertNull(d.position(), "no UP or DOWN folded in: the alert state is untouched");
    assertEquals(DerivedState.initial().withHistory(d.history()), d, "only the history mark moved");
    assertEquals(1, d.history().position().seq());
  }

  private static final HistoryPolicies CHANGES = HistoryPolicies.parse("changes", "", 60_000, "latency_ms");

  @Test
  void underTheChangesPolicyHistoryKeepsChangesAndHeartbeatsWhileRollupsAndDerivedStateSeeEveryResult() {
    // seq 1..8, one second apart: UP UP(latency only) DOWN DOWN UP, then UP at +61 s (heartbeat), UP, UP with a new field
    List<Envelope> batch = new ArrayList<>();
    String[] st = {"UP", "UP", "DOWN", "DOWN", "UP"};
    for (int i = 0; i < st.length; i++) batch.add(e("d1", i + 1, Priority.NORMAL, new JsonObject().put("status", st[i]).put("latency_ms", i)));
    batch.add(at(e("d1", 6, Priority.NORMAL, new JsonObject().put("status", "UP").put("latency_ms", 9)), 62_000));
    batch.add(at(e("d1", 7, Priority.NORMAL, new JsonObject().put("status", "UP").put("latency_ms", 3)), 63_000));
    batch.add(at(e("d1", 8, Priority.NORMAL, new JsonObject().put("status", "UP").put("latency_ms", 3).put("port", 80)), 64_000));
    StatePlanner.Plan every = StatePlanner.plan(new ArrayList<>(batch), new HashMap<>(), infos("d1"), AlertRules::forPriority);
    StatePlanner.Plan changes = StatePlanner.plan(new ArrayList<>(batch), new HashMap<>(), infos("d1"), AlertRules::forPriority, CHANGES);
    assertEquals(8, every.kept().size());
    assertEquals(List.of(1L, 3L, 5L, 6L, 8L), changes.kept().stream().map(h -> h.envelope().seq()).toList(),
        "the first result, the two status changes, the heartbeat 61 s after the last kept row, and the new field");
    assertEquals(8, changes.history().size(), "rollups see every result");
    assertEquals(every.next(), changes.next(), "derived state (history mark included) does not depend on the policy");
    assertEquals(every.events(), changes.events());
    assertEquals(every.current().get(0).derived(), changes.current().get(0).derived());
  }

  @Test
  void aReplayedBatchKeepsNothingNewUnderTheChangesPolicy() {
    List<Envelope> batch = List.of(e("d1", 1, Priority.NORMAL, new JsonObject().put("status", "UP")),
        e("d1", 2, Priority.NORMAL, new JsonObject().put("status", "DOWN")));
    StatePlanner.Plan first = StatePlanner.plan(new ArrayList<>(batch), new HashMap<>(), infos("d1"), AlertRules::forPriority, CHANGES);
    Map<String, DerivedState> memory = new HashMap<>(first.next());
    StatePlanner.Plan again = StatePlanner.plan(new ArrayList<>(batch), memory, infos("d1"), AlertRules::forPriority, CHANGES);
    assertEquals(2, first.kept().size());
    assertTrue(again.kept().isEmpty(), "results not newer than the mark are never kept again");
    assertTrue(again.next().isEmpty(), "and change nothing");
  }

  /** A result whose cycle_id is its collected_at, as the probe's outbox numbers them. */
  private static Envelope timed(String d, long ms, long seq) {
    return new Envelope(Envelope.messageId("n", ms, d, seq), d, 0, 1, 1, 1, "n", ms, seq, Instant.ofEpochMilli(ms), Priority.NORMAL,
        new JsonObject().put("status", "UP"));
  }

  @Test
  void aResultIsTheFirstOfItsMinuteOnlyWhenTheDevicesNewestResultBeforeTheBatchLiesBeforeThatMinute() {
    long minute = 1_765_000_000_000L / 60_000 * 60_000;
    // a device the memory does not know: its rows may exist (written by a slot's earlier owner), so none is taken for new
    StatePlanner.Plan first = StatePlanner.plan(new ArrayList<>(List.of(timed("d1", minute + 5_000, 1))), new HashMap<>(), infos("d1"),
        AlertRules::forPriority);
    assertEquals(List.of(false), first.history().stream().map(StatePlanner.HistoryRow::newMinute).toList());
    Map<String, DerivedState> memory = new HashMap<>(first.next());

    // the next minute, twice in one batch, and a result of the minute the device was last seen in: only the next minute is new,
    // for both of its results (the rollup row is written once for the two)
    StatePlanner.Plan next = StatePlanner.plan(new ArrayList<>(List.of(timed("d1", minute + 59_999, 2), timed("d1", minute + 60_000, 3),
        timed("d1", minute + 61_000, 4))), memory, infos("d1"), AlertRules::forPriority);
    assertEquals(List.of(false, true, true), next.history().stream().map(StatePlanner.HistoryRow::newMinute).toList(),
        "the device's newest result was in the first minute: its rows there may exist, the second minute's cannot");
    memory.putAll(next.next());

    // a redelivery of the batch: the memory has seen its results, so none is new
    StatePlanner.Plan again = StatePlanner.plan(new ArrayList<>(List.of(timed("d1", minute + 60_000, 3))), memory, infos("d1"),
        AlertRules::forPriority);
    assertEquals(List.of(false), again.history().stream().map(StatePlanner.HistoryRow::newMinute).toList());
    assertEquals(minute + 60_000, StatePlanner.minuteStartMs(Instant.ofEpochMilli(minute + 119_999)));
    assertEquals(minute - 60_000, StatePlanner.minuteStartMs(Instant.ofEpochMilli(minute - 1)));
  }

  private static Envelope at(Envelope x, long collectedMs) {
    return new Envelope(x.messageId(), x.deviceId(), 0, 1, 1, 1, "n", x.cycleId(), x.seq(), Instant.ofEpochMilli(collectedMs), x.priority(), x.payload());
  }

  @Test
  void aPayloadTheProfileCannotFoldRejectsOnlyThatDevice() {
    Map<String, DeviceDirectory.Info> infos = infos("good");
    // a failing fold: the rules cannot merge a null update, so this device's messages are set aside with the reason
    infos.put("bad", new DeviceDirectory.Info(2, PayloadProfiles.HOTEL_ROOM, true));
    List<Envelope> batch = List.of(e("good", 1, Priority.NORMAL, new JsonObject().put("status", "UP")), e("bad", 1, Priority.NORMAL, null));
    StatePlanner.Plan p = StatePlanner.plan(batch, new HashMap<>(), infos, AlertRules::forPriority);
    assertEquals(1, p.current().size());
    assertTrue(p.rejected().containsKey("bad"), p.rejected().toString());
  }

  @Test
  void aHotelFrameOlderByDeviceTimeButNewerBySeqNeitherChangesThePayloadNorIsSentForTheGuardedMergeButHistoryKeepsIt() {
    Map<String, DeviceDirectory.Info> infos = new HashMap<>();
    infos.put("room", new DeviceDirectory.Info(2, PayloadProfiles.HOTEL_ROOM, true));
    JsonObject newer = new JsonObject("{\"ts_ms\":2000,\"sys_lock_status\":1,\"dev_loops\":{\"001023012\":{\"state\":\"on\"}}}");
    JsonObject older = new JsonObject("{\"ts_ms\":1000,\"sys_lock_status\":0,\"dev_loops\":{\"001023012\":{\"state\":\"off\"}}}");
    StatePlanner.Plan p = StatePlanner.plan(List.of(e("room", 3, Priority.NORMAL, older), e("room", 2, Priority.NORMAL, newer)), new HashMap<>(), infos,
        AlertRules::forPriority);
    StatePlanner.CurrentRow row = p.current().get(0);
    assertEquals(3, row.newest().seq(), "the row still moves to the newest seq");
    assertEquals(newer, row.payload(), "seq 3 is older by device time: it changes nothing");
    assertEquals(List.of(newer), row.guarded());
    assertEquals(2, p.history().size(), "history keeps every frame");
    assertNull(StatePlanner.plan(List.of(e("d", 1, Priority.NORMAL, new JsonObject().put("status", "UP"))), new HashMap<>(), infos("d"),
        AlertRules::forPriority).current().get(0).guarded(), "only profiles with a device time are guarded");
  }
}
