package dev.inspection.state;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RollupFoldTest {
  private static final Instant M = Instant.parse("2026-12-01T10:00:00Z");

  private static RollupFold.Sample s(long seq, String status) {
    return new RollupFold.Sample("d", 1, seq, M.plusSeconds(seq), new JsonObject().put("status", status).put("seq", seq));
  }

  /** Applies rows to a map of stored rows, as the upsert does. */
  private static void store(Map<RollupFold.Key, RollupFold.Stored> db, List<RollupFold.Row> rows) {
    for (RollupFold.Row r : rows) {
      RollupFold.Stored old = db.get(r.key());
      db.put(r.key(), new RollupFold.Stored(r.samples(), r.down(), r.changes(), r.lastState(), r.takesLast() ? r.lastCycle() : old.lastCycle(),
          r.takesLast() ? r.lastSeq() : old.lastSeq(), r.seenCycle(), r.seenSeq()));
    }
  }

  @Test
  void countsSamplesDownsAndChangesInOrderWhateverOrderTheyCameIn() {
    List<RollupFold.Row> rows = RollupFold.fold(Map.of(), List.of(s(3, "UP"), s(1, "UP"), s(2, "DOWN"), s(4, "UP")));
    assertEquals(1, rows.size());
    RollupFold.Row r = rows.get(0);
    assertEquals(4, r.samples());
    assertEquals(1, r.down());
    assertEquals(2, r.changes(), "UP DOWN UP UP");
    assertEquals("UP", r.lastState());
    assertEquals(4L, r.lastSeq());
    assertArrayEquals(new long[] {1, 2, 3, 4}, r.seenSeq());
  }

  @Test
  void aResultAlreadyCountedIsSkippedSoReplayingEverythingChangesNothing() {
    Map<RollupFold.Key, RollupFold.Stored> db = new HashMap<>();
    List<RollupFold.Sample> day = new ArrayList<>();
    for (int i = 1; i <= 50; i++) day.add(s(i, i % 5 == 0 ? "DOWN" : "UP"));
    store(db, RollupFold.fold(db, day.subList(0, 20)));
    store(db, RollupFold.fold(db, day.subList(10, 50))); // overlaps the first batch: a redelivery
    Map<RollupFold.Key, RollupFold.Stored> once = new HashMap<>(db);
    assertTrue(RollupFold.fold(db, day).isEmpty(), "a replay writes nothing");
    assertEquals(once, db);
    RollupFold.Stored r = db.values().iterator().next();
    assertEquals(50, r.samples());
    assertEquals(10, r.down());
    assertEquals(19, r.changes(), "each DOWN is a change in and a change out, but the last one only in");
  }

  @Test
  void aLateOlderResultIsCountedButDoesNotReplaceTheLastState() {
    Map<RollupFold.Key, RollupFold.Stored> db = new HashMap<>();
    store(db, RollupFold.fold(db, List.of(s(5, "UP"))));
    RollupFold.Row late = RollupFold.fold(db, List.of(s(2, "DOWN"))).get(0);
    assertFalse(late.takesLast());
    assertNull(late.lastPayload());
    assertEquals(2, late.samples());
    assertEquals(1, late.down());
    assertEquals("UP", late.lastState());
    assertEquals(1, late.changes(), "the stored last state differs from the first new one, as before");
  }

  @Test
  void minutesAreSeparateRowsAndRowsFromBeforeTheSeenListCountAsSeenNothing() {
    RollupFold.Sample next = new RollupFold.Sample("d", 1, 99, M.plusSeconds(61), new JsonObject().put("status", "UP"));
    Map<RollupFold.Key, RollupFold.Stored> db = new HashMap<>();
    db.put(new RollupFold.Key(M, "d"), new RollupFold.Stored(3, 0, 0, "UP", 1L, 3L, null, null));
    List<RollupFold.Row> rows = RollupFold.fold(db, List.of(s(4, "UP"), next));
    assertEquals(2, rows.size());
    assertEquals(4, rows.get(0).samples());
    assertEquals(M.plusSeconds(60), rows.get(1).key().minute());
    assertEquals(1, rows.get(1).samples());
  }

  @Test
  void aLongStatusIsCutToTheColumnWidth() {
    RollupFold.Sample x = new RollupFold.Sample("d", 1, 1, M, new JsonObject().put("status", "X".repeat(40)));
    assertEquals(RollupFold.STATE_WIDTH, RollupFold.fold(Map.of(), List.of(x)).get(0).lastState().length());
  }
}
