package dev.inspection.messaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class EnvelopeTest {
  private static final Envelope E = new Envelope(Envelope.messageId("is-03", 20260425103000L, "dev_1", 42), "dev_1", 73, 1024, 17, 9,
      "is-03", 20260425103000L, 42, Instant.parse("2026-04-25T10:30:01.123Z"), Priority.HIGH, new JsonObject().put("status", "UP"));

  @Test
  void theStreamedBytesAreExactlyTheEncodedTree() throws Exception {
    JsonObject payload = new JsonObject().put("status", "UP").put("latency_ms", 12.5).put("note", "Zimmer 3 \u00fc \"quoted\" \\ \n \u4e2d")
        .put("list", new io.vertx.core.json.JsonArray().add(1).add(true).addNull().add(new JsonObject().put("a", Long.MAX_VALUE)))
        .putNull("gone").put("big", 12345678901234L);
    for (Envelope e : new Envelope[] {E, new Envelope("n:1:d:1", "d", 0, 1, 0, 0, "n", 1, 1, Instant.EPOCH, Priority.HIGH, payload),
        new Envelope("n2:2:d2:9", "d2", 255, 3, 4, 5, "n2", 2, 9, Instant.parse("2026-12-02T03:04:05.678Z"), Priority.LOW, new JsonObject())}) {
      assertEquals(e.toJson().encode(), new String(e.toBytes(), StandardCharsets.UTF_8));
      assertEquals(e, Envelope.parse(e.toBytes(), 1 << 20), "and it parses back to the same envelope");
    }
  }

  @Test
  void oneWriterGivesEachOfManyEnvelopesExactlyItsOwnBytes() {
    JsonObject payload = new JsonObject().put("status", "DOWN").put("note", "\u00fc \"q\"").put("n", 7);
    try (Envelope.Writer w = new Envelope.Writer()) {
      for (int i = 0; i < 50; i++) {
        Envelope e = new Envelope(Envelope.messageId("n", 1000 + i, "dev-" + i, i + 1), "dev-" + i, i % 7, 1, 0, 0, "n", 1000 + i, i + 1,
            Instant.ofEpochMilli(1_796_000_000_000L + i * 1_001L), i % 2 == 0 ? Priority.NORMAL : Priority.HIGH, i % 3 == 0 ? payload : E.payload());
        assertEquals(new String(e.toBytes(), StandardCharsets.UTF_8), new String(w.write(e), StandardCharsets.UTF_8), "envelope " + i);
      }
    }
  }

  @Test
  void roundTripKeepsEveryField() throws Exception {
    Envelope back = Envelope.parse(E.toBytes(), 65536);
    assertEquals(E, back);
    assertEquals("is-03:20260425103000:dev_1:42", back.messageId());
  }

  private static String reason(String json) {
    return assertThrows(InvalidMessage.class, () -> Envelope.parse(json.getBytes(StandardCharsets.UTF_8), 65536)).reason;
  }

  @Test
  void everyWayOfBeingWrongHasAReason() {
    assertEquals("malformed_json", reason("{nope"));
    assertEquals("malformed_json", reason("[1,2]"));
    assertEquals("missing_field", reason("{\"envelope\":{}}"));
    assertEquals("unknown_schema", reason(E.toJson().put("schema_version", 4).encode()));
    assertEquals("unknown_schema", reason(E.toJson().put("schema_version", "2").encode()));
    JsonObject noSeq = E.toJson();
    noSeq.getJsonObject("envelope").remove("seq");
    assertEquals("missing_field", reason(noSeq.encode()));
    JsonObject badId = E.toJson();
    badId.getJsonObject("envelope").put("message_id", "is-03:1:dev_1:42");
    assertEquals("bad_field", reason(badId.encode()));
    JsonObject badTime = E.toJson();
    badTime.getJsonObject("envelope").put("collected_at", "yesterday");
    assertEquals("bad_field", reason(badTime.encode()));
    JsonObject badPrio = E.toJson();
    badPrio.getJsonObject("envelope").put("priority", "urgent");
    assertEquals("bad_field", reason(badPrio.encode()));
    assertEquals("bad_field", reason(E.toJson().put("payload", "text").encode()));
  }

  @Test
  void oversizedIsRefusedBeforeParsing() {
    InvalidMessage m = assertThrows(InvalidMessage.class, () -> Envelope.parse(new byte[70_000], 65536));
    assertEquals("oversized", m.reason);
  }

  @Test
  void slotIsCrc32OfTheDeviceIdModuloTheSlotCount() {
    // CRC32("123456789") = 0xCBF43926, the standard check value
    assertEquals(0xCBF43926L % 256, SlotHash.slotOf("123456789", 256));
    assertEquals(0xCBF43926L % 7, SlotHash.slotOf("123456789", 7));
    int[] counts = new int[256];
    for (int i = 0; i < 256_000; i++) counts[SlotHash.slotOf("dev-" + i, 256)]++;
    for (int c : counts) assertEquals(1000, c, 150); // spread evenly enough to balance by slot
  }
}
