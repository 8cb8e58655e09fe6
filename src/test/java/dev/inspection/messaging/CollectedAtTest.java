package dev.inspection.messaging;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class CollectedAtTest {
  private static Envelope result(String device, Instant collected) {
    return new Envelope(Envelope.messageId("n1", collected.toEpochMilli(), device, 1), device, 0, 1, 1, 1, "n1", collected.toEpochMilli(), 1,
        collected, Priority.LOW, new JsonObject().put("status", "UP").put("collected_at", "2000-01-01T00:00:00Z"));
  }

  @Test
  void aSingleResultIsAgedByItsEnvelopesCollectedAtNotByAPayloadField() {
    Instant t = Instant.parse("2026-12-01T10:00:00.123Z");
    assertEquals(t.toEpochMilli(), CollectedAt.firstMs(result("d1", t).toBytes(), -1));
  }

  @Test
  void aBatchIsAgedByItsFirstResultTheOldest() {
    Instant first = Instant.parse("2026-12-01T10:00:00Z");
    byte[] body = ResultBatch.join(List.of(result("d1", first).toBytes(), result("d2", first.plusSeconds(5)).toBytes()));
    assertEquals(first.toEpochMilli(), CollectedAt.firstMs(body, -1));
  }

  @Test
  void aKeyIsFoundAtItsByteOffsetAlsoAfterMultiByteCharacters() {
    byte[] key = "\"k\":1".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    byte[] body = "{\"name\":\"Zürich – 東京\",\"k\":1}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    int at = CollectedAt.indexOf(body, key);
    assertEquals('"', body[at]);
    assertEquals('k', body[at + 1]);
    assertEquals(body.length - 1 - key.length, at);
    assertEquals(0, CollectedAt.indexOf(key, key));
    assertEquals(-1, CollectedAt.indexOf("\"k\":2".getBytes(java.nio.charset.StandardCharsets.US_ASCII), key));
    assertEquals(-1, CollectedAt.indexOf(new byte[] {'"'}, key), "a body shorter than the key");
  }

  @Test
  void theLeadingSearchFindsWhatTheWholeBodySearchFinds() {
    byte[] key = "\"collected_at\":\"".getBytes(StandardCharsets.US_ASCII);
    Instant t = Instant.parse("2026-12-01T10:00:00Z");
    byte[] batch = ResultBatch.join(List.of(result("d1", t).toBytes(), result("d2", t).toBytes()));
    List<String> bodies = List.of("", "\"", "\"collected_at\":", "\"collected_at\":\"", "x\"collected_at\":\"", "\"\"collected_at\"\"collected_at\":\"",
        "{\"name\":\"Zürich – 東京\",\"collected_at\":\"1\"}", "{\"collected_at\" : \"1\"}", new String(batch, StandardCharsets.UTF_8));
    for (String body : bodies) {
      byte[] b = body.getBytes(StandardCharsets.UTF_8);
      assertEquals(CollectedAt.indexOf(b, key), CollectedAt.leadingIndexOf(b, key), body);
    }
    assertEquals(0, CollectedAt.leadingIndexOf(key, key));
  }

  @Test
  void aHandWrittenBodyWithCollectedAtLastIsStillRead() {
    String body = "{\"payload\":{\"status\":\"UP\",\"pad\":\"" + "x".repeat(5000) + "\"},\"collected_at\":\"2026-12-01T10:00:00.5Z\"}";
    assertEquals(Instant.parse("2026-12-01T10:00:00.5Z").toEpochMilli(), CollectedAt.firstMs(body.getBytes(StandardCharsets.UTF_8), -1));
  }

  @Test
  void aBodyWithoutAReadableCollectedAtGetsTheFallback() {
    for (String body : List.of("", "not json", "{\"collected_at\":\"yesterday\"}", "{\"collected_at\":\"2026-12-01T10:00:00Z",
        "{\"collected_at\":12}")) {
      assertEquals(42, CollectedAt.firstMs(body.getBytes(StandardCharsets.UTF_8), 42), body);
    }
  }
}
