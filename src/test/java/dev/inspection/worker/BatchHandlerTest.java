package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.ResultBatch;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.Topology;
import dev.inspection.state.AlertRules;
import dev.inspection.state.Check;
import dev.inspection.state.DerivedState;
import dev.inspection.state.DeviceFold;
import dev.inspection.state.HistoryPolicies;
import dev.inspection.state.SnapshotLayout;
import dev.inspection.state.PayloadProfiles;
import dev.inspection.worker.BatchHandler.Dead;
import dev.inspection.worker.BatchHandler.Handled;
import dev.inspection.worker.BatchHandler.Valid;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BatchHandlerTest {
  private static final int SLOT = 0;
  /** One slot: every device hashes to it (the hash check has its own tests below, on four slots). */
  private static final Topology TOPOLOGY = new Topology("t", 1, 1_000_000, 5);
  private static final long NOW = 1_700_000_000_000L;
  private static final Clock CLOCK = Clock.fixed(Instant.ofEpochMilli(NOW), ZoneOffset.UTC);
  private static final long SKEW = 600_000;

  /** A delivery as the handler sees it. */
  record Msg(String name, byte[] body, Priority priority, String routingKey) implements BatchHandler.Received {}

  private final Map<String, DeviceDirectory.Info> inventory = new HashMap<>();
  private final List<List<String>> lookups = new ArrayList<>();
  private final BatchHandler handler = new BatchHandler(new ResultGuard(SLOT, 1, SKEW), CLOCK, new BatchHandler.Limits(2048, 8192), TOPOLOGY, (ids, queue) -> {
    lookups.add(List.copyOf(ids));
    Map<String, DeviceDirectory.Info> out = new HashMap<>();
    for (String id : ids) out.put(id, inventory.getOrDefault(id, DeviceDirectory.Info.fallback(queue.get(id))));
    return Future.succeededFuture(out);
  }, AlertRules::forPriority, HistoryPolicies.EVERY, SnapshotLayout.COMPACT, Map.of());

  private static Envelope envelope(String device, int slot, long seq, JsonObject payload) {
    return new Envelope(Envelope.messageId("n", 1000 + seq, device, seq), device, slot, 1, 1, 1, "n", 1000 + seq, seq,
        Instant.ofEpochMilli(1000 + seq), Priority.NORMAL, payload);
  }

  private static Msg msg(String name, Envelope e) {
    return new Msg(name, e.toBytes(), e.priority(), TOPOLOGY.routingKey(e.slotId(), e.priority()));
  }

  private static Msg raw(String name, String body) {
    return new Msg(name, body.getBytes(StandardCharsets.UTF_8), Priority.NORMAL, TOPOLOGY.routingKey(SLOT, Priority.NORMAL));
  }

  private static Msg up(String device, long seq) {
    return msg(device + "#" + seq, envelope(device, SLOT, seq, new JsonObject().put("status", "UP")));
  }

  private Handled<Msg> handle(Msg... batch) {
    Future<Handled<Msg>> f = handler.handle(List.of(batch));
    assertTrue(f.succeeded(), () -> "handled: " + f.cause());
    return f.result();
  }

  private static List<String> reasons(Handled<Msg> h) {
    return h.dead().stream().map(d -> d.letter().reason()).toList();
  }

  @Test
  void anEnvelopeOfAnotherSlotIsDeadLetteredAsWrongSlot() {
    Handled<Msg> h = handle(msg("elsewhere", envelope("d1", 3, 1, new JsonObject().put("status", "UP"))));
    assertEquals(List.of("wrong_slot"), reasons(h));
    assertTrue(h.dead().get(0).letter().detail().contains("slot_id 3 arrived on slot 0"), h.dead().get(0).letter().detail());
    assertNull(h.plan(), "nothing to write");
    assertTrue(h.toCommit().isEmpty());
    assertTrue(lookups.isEmpty(), "no device lookup for a batch without a valid message");
  }

  private static Msg batch(String name, Envelope... results) {
    return new Msg(name, ResultBatch.join(Arrays.stream(results).map(Envelope::toBytes).toList()), Priority.NORMAL,
        TOPOLOGY.routingKey(SLOT, Priority.NORMAL));
  }

  @Test
  void aBatchMessageCommitsItsGoodResultsAndSetsTheBadOneAsideAlone() throws Exception {
    Envelope otherSlot = envelope("dx", 2, 1, new JsonObject().put("status", "UP"));
    Msg v3 = batch("v3", envelope("d1", SLOT, 1, new JsonObject().put("status", "UP")), otherSlot,
        envelope("d2", SLOT, 1, new JsonObject().put("status", "DOWN")));
    Handled<Msg> h = handle(up("d3", 1), v3, up("d1", 2));
    assertEquals(List.of("d3#1", "v3", "v3", "d1#2"), h.toCommit().stream().map(v -> v.delivery().name()).toList(),
        "v2 and v3 side by side; both good results of the batch commit");
    assertEquals(List.of("d3", "d1", "d2", "d1"), h.toCommit().stream().map(v -> v.envelope().deviceId()).toList());
    assertEquals(List.of("wrong_slot"), reasons(h));
    assertEquals("v3", h.dead().get(0).delivery().name());
    assertEquals(otherSlot, Envelope.fromJson(new JsonObject(new String(h.dead().get(0).letter().body(), StandardCharsets.UTF_8))),
        "the dead letter is the bad result alone, as a v2 message");
  }

  @Test
  void aBodyThatIsNotJsonIsDeadLetteredAsMalformed() {
    Handled<Msg> h = handle(raw("broken", "{not json"));
    assertEquals(List.of("malformed_json"), reasons(h));
    assertEquals("broken", h.dead().get(0).delivery().name());
  }

  @Test
  void aBodyOverTheLimitIsDeadLetteredAsOversizedWithoutBeingRead() {
    Handled<Msg> h = handle(raw("big", "{\"x\":\"" + "a".repeat(4000) + "\"}"));
    assertEquals(List.of("oversized"), reasons(h));
  }

  @Test
  void validMessagesCommitAndOnlyTheInvalidOnesAreSetAside() {
    Msg bad = raw("broken", "{not json");
    Msg wrong = msg("elsewhere", envelope("dx", 2, 1, new JsonObject().put("status", "UP")));
    Handled<Msg> h = handle(up("d1", 1), bad, up("d2", 1), wrong, up("d1", 2));
    assertEquals(List.of("d1#1", "d2#1", "d1#2"), h.toCommit().stream().map(v -> v.delivery().name()).toList(),
        "the valid ones are acked after the commit, in batch order");
    assertEquals(3, h.plan().history().size());
    assertEquals(2, h.plan().current().size(), "one current row per device");
    assertEquals(List.of("broken", "elsewhere"), h.dead().stream().map(d -> d.delivery().name()).toList());
    assertEquals(List.of("malformed_json", "wrong_slot"), reasons(h));
    Dead<Msg> first = h.dead().get(0);
    assertEquals(TOPOLOGY.queue(SLOT, Priority.NORMAL), first.letter().queue(), "the dead letter names the queue it came from");
    assertEquals(bad.routingKey(), first.letter().routingKey());
    assertEquals(1, lookups.size(), "one lookup for the batch");
    assertEquals(List.of("d1", "d2"), lookups.get(0).stream().sorted().toList());
  }

  @Test
  void aPayloadItsProfileCannotReadIsDeadLetteredAsBadPayload() {
    inventory.put("room1", new DeviceDirectory.Info(2, PayloadProfiles.HOTEL_ROOM, true));
    Handled<Msg> h = handle(msg("room", envelope("room1", SLOT, 1, new JsonObject().put("frame", "0x99"))), up("d1", 1));
    assertEquals(List.of("bad_payload"), reasons(h));
    assertTrue(h.dead().get(0).letter().detail().contains("'hotel_room'"), h.dead().get(0).letter().detail());
    assertEquals(List.of("d1#1"), h.toCommit().stream().map(v -> v.delivery().name()).toList());
  }

  @Test
  void aDeviceThePlannerRejectsIsDeadLetteredAsUnprocessable() {
    inventory.put("odd", new DeviceDirectory.Info(9, PayloadProfiles.DEFAULT, true)); // no alert rules for priority 9
    Handled<Msg> h = handle(up("odd", 1), up("odd", 2), up("d1", 1));
    assertEquals(List.of("unprocessable", "unprocessable"), reasons(h), "every message of the rejected device");
    assertEquals(List.of("d1#1"), h.toCommit().stream().map(v -> v.delivery().name()).toList());
    assertEquals(1, h.plan().history().size());
  }

  @Test
  void parseFailuresAreKnownBeforeTheLookupThatMayFail() {
    BatchHandler failing = new BatchHandler(new ResultGuard(SLOT, 1, SKEW), CLOCK, new BatchHandler.Limits(2048, 8192), TOPOLOGY, (ids, queue) -> Future.failedFuture("database down"), AlertRules::forPriority, HistoryPolicies.EVERY, SnapshotLayout.COMPACT,
        Map.of());
    BatchHandler.Parsed<Msg> parsed = failing.parse(List.of(raw("broken", "{not json"), up("d1", 1)));
    assertEquals(List.of("malformed_json"), parsed.dead().stream().map(d -> d.letter().reason()).toList());
    assertEquals(List.of("d1#1"), parsed.valid().stream().map(Valid::delivery).map(Msg::name).toList());
    assertTrue(failing.plan(parsed).failed(), "a lookup failure fails the batch (the processor pauses for the database)");
  }

  @Test
  void aNulInThePayloadIsSetAsideAsInvalidPayloadBeforeTheDatabaseSeesIt() {
    Msg nul = msg("nul", envelope("d2", SLOT, 1, new JsonObject().put("status", "UP").put("note", "a\u0000b")));
    Handled<Msg> h = handle(up("d1", 1), nul, up("d3", 1));
    assertEquals(List.of("invalid_payload"), reasons(h));
    assertEquals("nul", h.dead().get(0).delivery().name());
    assertTrue(h.dead().get(0).letter().detail().startsWith("payload.note contains a NUL"), h.dead().get(0).letter().detail());
    assertEquals(List.of("d1#1", "d3#1"), h.toCommit().stream().map(v -> v.delivery().name()).toList());
    assertEquals(List.of("d1", "d3"), lookups.get(0).stream().sorted().toList(), "the refused device is not even looked up");
  }

  @Test
  void theResultsOfADevicePostgresRefusedBecomeDbRejectedLettersWithTheSqlState() throws Exception {
    Msg v3 = batch("v3", envelope("d1", SLOT, 3, new JsonObject().put("status", "UP")), envelope("d2", SLOT, 1, new JsonObject().put("status", "UP")));
    Handled<Msg> h = handle(up("d1", 1), up("d2", 2), v3);
    DbErrors.DbError e = new DbErrors.DbError(DbErrors.Kind.POISON, "23514", "new row violates check constraint \"c\"");
    List<Dead<Msg>> refused = handler.refused(h.toCommit(), Map.of("d1", e));
    assertEquals(List.of("d1#1", "v3"), refused.stream().map(d -> d.delivery().name()).toList(), "every result of the refused device, none of d2's");
    assertTrue(refused.stream().allMatch(d -> d.letter().reason().equals("db_rejected")));
    String detail = refused.get(0).letter().detail();
    assertTrue(detail.contains("device d1") && detail.contains("SQLSTATE 23514: new row violates check constraint"), detail);
    assertEquals(envelope("d1", SLOT, 3, new JsonObject().put("status", "UP")),
        Envelope.fromJson(new JsonObject(new String(refused.get(1).letter().body(), StandardCharsets.UTF_8))),
        "from a v3 message, the refused result alone");
    assertEquals(TOPOLOGY.queue(SLOT, Priority.NORMAL), refused.get(0).letter().queue());
    assertEquals(List.of(), handler.refused(h.toCommit(), Map.of()));
  }

  @Test
  void theDerivedStateChangesOnlyWhenTheOwnerReportsTheCommit() {
    Handled<Msg> h = handle(msg("down", envelope("d1", SLOT, 1, new JsonObject().put("status", "DOWN"))));
    assertNull(handler.derived("d1"), "planning alone changes nothing");
    handler.committed(h.plan());
    assertEquals(1, handler.derived("d1").consecFailures());
  }

  @Test
  void aLoadedSnapshotIsReadAtTheDevicesFirstResultAndAnUnreadableOneStartsItsCountersAgain() {
    DerivedState twoDown = DerivedState.initial();
    for (int k = 1; k <= 2; k++) {
      twoDown = DeviceFold.apply(twoDown, new Check("d1", 900 + k, k, Instant.ofEpochMilli(900 + k), false, new JsonObject()), AlertRules.forPriority(2)).next();
    }
    Map<String, String> loaded = new HashMap<>(Map.of("d1", SnapshotLayout.COMPACT.encode(twoDown), "d2", "{not json", "d9",
        SnapshotLayout.COMPACT.encode(twoDown)));
    BatchHandler taking = new BatchHandler(new ResultGuard(SLOT, 1, SKEW), CLOCK, new BatchHandler.Limits(2048, 8192), TOPOLOGY,
        (ids, queue) -> {
          Map<String, DeviceDirectory.Info> out = new HashMap<>();
          for (String id : ids) out.put(id, DeviceDirectory.Info.fallback(queue.get(id)));
          return Future.succeededFuture(out);
        }, AlertRules::forPriority, HistoryPolicies.EVERY, SnapshotLayout.COMPACT, loaded);
    assertEquals(twoDown, taking.derived("d1"), "a loaded device's state before its first result: the one its previous owner committed");
    assertNull(taking.derived("d2"), "an unreadable snapshot");

    Future<Handled<Msg>> f = taking.handle(List.of(msg("d1", envelope("d1", SLOT, 5, new JsonObject().put("status", "DOWN"))),
        msg("d2", envelope("d2", SLOT, 6, new JsonObject().put("status", "DOWN")))));
    assertTrue(f.succeeded(), () -> "handled: " + f.cause());
    StatePlanner.Plan plan = f.result().plan();
    assertEquals(3, plan.next().get("d1").consecFailures(), "the third failure in a row, counted on the loaded state");
    assertEquals(1, plan.next().get("d2").consecFailures(), "the unreadable snapshot's device starts again");
    assertEquals(Map.of("d9", SnapshotLayout.COMPACT.encode(twoDown)), loaded, "the texts of d1 and d2 read and dropped; d9 waits for its result");
    assertEquals(twoDown, taking.derived("d1"), "before the commit the state stays the loaded one");
    taking.committed(plan);
    assertEquals(3, taking.derived("d1").consecFailures());
    assertEquals(twoDown, taking.derived("d9"));
  }

  private static Envelope at(String device, int slot, long cycle, long seq) {
    return new Envelope(Envelope.messageId("n", cycle, device, seq), device, slot, 1, 1, 1, "n", cycle, seq, Instant.ofEpochMilli(cycle),
        Priority.NORMAL, new JsonObject().put("status", "UP"));
  }

  @Test
  void aDeviceOfAnotherSlotAndAResultFromTheFutureAreSetAsideAndTheRestOfTheBatchCommits() {
    // four slots; this handler owns slot 0: d2 hashes to 0, d1 to 2 (CRC32 mod 4)
    Topology four = new Topology("t", 4, 1_000_000, 5);
    BatchHandler h4 = new BatchHandler(new ResultGuard(0, 4, SKEW), CLOCK, new BatchHandler.Limits(2048, 8192), four, (ids, queue) -> {
      Map<String, DeviceDirectory.Info> out = new HashMap<>();
      for (String id : ids) out.put(id, DeviceDirectory.Info.fallback(queue.get(id)));
      return Future.succeededFuture(out);
    }, AlertRules::forPriority, HistoryPolicies.EVERY, SnapshotLayout.COMPACT, Map.of());
    Msg forged = new Msg("forged", at("d1", 0, NOW, 1).toBytes(), Priority.NORMAL, four.routingKey(0, Priority.NORMAL));
    Msg future = new Msg("future", at("d2", 0, NOW + SKEW + 1, 2).toBytes(), Priority.NORMAL, four.routingKey(0, Priority.NORMAL));
    Msg edge = new Msg("edge", at("d2", 0, NOW + SKEW, 1).toBytes(), Priority.NORMAL, four.routingKey(0, Priority.NORMAL));
    Msg good = new Msg("good", at("d9", 0, NOW - 5_000, 1).toBytes(), Priority.NORMAL, four.routingKey(0, Priority.NORMAL));
    Future<Handled<Msg>> f = h4.handle(List.of(forged, future, edge, good));
    assertTrue(f.succeeded());
    Handled<Msg> h = f.result();
    assertEquals(List.of("forged", "future"), h.dead().stream().map(d -> d.delivery().name()).toList());
    assertEquals(List.of("wrong_slot", "future_cycle"), reasons(h));
    assertTrue(h.dead().get(0).letter().detail().contains("hashes to slot 2"), h.dead().get(0).letter().detail());
    assertTrue(h.dead().get(1).letter().detail().contains("worker.max.future.skew.ms"), h.dead().get(1).letter().detail());
    assertEquals(four.queue(0, Priority.NORMAL), h.dead().get(1).letter().queue());
    assertEquals(List.of("edge", "good"), h.toCommit().stream().map(v -> v.delivery().name()).toList(),
        "exactly at the limit is still accepted; the others in the batch are unaffected");
    assertEquals(2, h.plan().current().size());
  }
}
