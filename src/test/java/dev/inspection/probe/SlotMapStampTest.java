package dev.inspection.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.Priority;
import dev.inspection.messaging.SlotHash;
import dev.inspection.outbox.CheckResult;
import dev.inspection.probe.SlotMapStamp.Stamp;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class SlotMapStampTest {
  private static JsonObject answer(long version, int slots) {
    return new JsonObject().put("stamp", new JsonObject().put("version", version).put("slots", slots));
  }

  @Test
  void aProbeMovesToANewerSwitchedVersionAndNeverBack() {
    Stamp v1 = new Stamp(1, 64);
    assertEquals(new Stamp(2, 128), SlotMapStamp.next(v1, answer(2, 128)));
    assertSame(v1, SlotMapStamp.next(v1, answer(1, 64)));
    Stamp v2 = new Stamp(2, 128);
    assertSame(v2, SlotMapStamp.next(v2, answer(1, 64)), "an older answer (a lagging scheduler) changes nothing");
    assertSame(v2, SlotMapStamp.next(v2, new JsonObject()), "an answer without a stamp (an older scheduler) changes nothing");
    assertSame(v2, SlotMapStamp.next(v2, null));
    assertSame(v2, SlotMapStamp.next(v2, new JsonObject().put("stamp", new JsonObject().put("version", "x"))));
  }

  @Test
  void resultsAreHashedAndStampedWithTheVersionInUse() {
    SlotMapStamp s = new SlotMapStamp("p", 64);
    String d = null;
    for (int i = 0; d == null; i++) if (SlotHash.slotOf("d" + i, 64) != SlotHash.slotOf("d" + i, 128)) d = "d" + i;
    CheckResult r = new CheckResult(d, SlotHash.slotOf(d, 64), Priority.NORMAL, Instant.EPOCH, 0, 1, 1, new JsonObject());
    assertSame(r, s.stamped(r));
    assertTrue(s.heard(answer(2, 128), "test"));
    assertFalse(s.heard(answer(2, 128), "test"), "heard twice: switched once");
    CheckResult after = s.stamped(r);
    assertEquals(SlotHash.slotOf(d, 128), after.slot());
    assertEquals(2, after.slotMapVersion());
    assertEquals(r.deviceId(), after.deviceId());
  }
}
