package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.state.AlertRules;
import dev.inspection.state.DerivedState;
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
    assertNull(p.current().get(0).derived(), "no derived state to write for a device that never reported UP or DOWN");
    assertTrue(p.next().isEmpty());
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
}
