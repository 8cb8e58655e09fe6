package dev.inspection.messaging;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResultBatchTest {
  private static Envelope result(String device, long seq) {
    return new Envelope(Envelope.messageId("p1", 5000, device, seq), device, 3, 1, 1, 1, "p1", 5000, seq, Instant.parse("2026-12-01T10:00:00Z"),
        Priority.NORMAL, new JsonObject().put("status", "UP").put("n", seq));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aJoinedBatchReadsBackAsTheSameResultsEachWithItsOwnMessageId() throws Exception {
    List<Envelope> in = List.of(result("a", 1), result("b", 1), result("a", 2));
    byte[] body = ResultBatch.join(in.stream().map(Envelope::toBytes).toList());
    assertTrue(new String(body, StandardCharsets.UTF_8).startsWith("{\"schema_version\":3,\"results\":[{"));
    List<ResultBatch.Item> items = ResultBatch.parse(body, 65536, 1 << 20);
    assertEquals(in, items.stream().map(ResultBatch.Item::envelope).toList());
    assertEquals(List.of("p1:5000:a:1", "p1:5000:b:1", "p1:5000:a:2"), items.stream().map(i -> i.envelope().messageId()).toList());
  }

  @Test
  void aV2MessageIsOneItemWhoseBodyIsTheMessageItself() throws Exception {
    byte[] v2 = result("a", 7).toBytes();
    List<ResultBatch.Item> items = ResultBatch.parse(v2, 65536, 1 << 20);
    assertEquals(1, items.size());
    assertEquals(result("a", 7), items.get(0).envelope());
    assertArrayEquals(v2, items.get(0).body());
  }

  @Test
  void aBadResultIsThatItemAloneAndItsBodyIsAV2MessageOnItsOwn() throws Exception {
    JsonObject noSeq = result("b", 1).toJson();
    noSeq.getJsonObject("envelope").remove("seq");
    byte[] body = ResultBatch.join(List.of(result("a", 1).toBytes(), bytes(noSeq.encode()), bytes("17"), result("c", 1).toBytes()));
    List<ResultBatch.Item> items = ResultBatch.parse(body, 65536, 1 << 20);
    assertEquals(4, items.size());
    assertEquals(result("a", 1), items.get(0).envelope());
    assertNull(items.get(1).envelope());
    assertEquals("missing_field", items.get(1).invalid().reason);
    assertEquals(noSeq, new JsonObject(new String(items.get(1).body(), StandardCharsets.UTF_8)), "the dead letter keeps the result as it came");
    assertEquals("bad_field", items.get(2).invalid().reason);
    assertEquals(result("c", 1), items.get(3).envelope());
  }

  private static String reason(String body, int maxResult, int maxBatch) {
    return assertThrows(InvalidMessage.class, () -> ResultBatch.parse(bytes(body), maxResult, maxBatch)).reason;
  }

  @Test
  void faultsOfTheWholeMessageRefuseItWhole() {
    assertEquals("malformed_json", reason("{\"schema_version\":3,\"results\":[{]}", 65536, 1 << 20));
    assertEquals("missing_field", reason("{\"schema_version\":3}", 65536, 1 << 20));
    assertEquals("bad_field", reason("{\"schema_version\":3,\"results\":[]}", 65536, 1 << 20));
    assertEquals("bad_field", reason("{\"schema_version\":3,\"results\":{}}", 65536, 1 << 20));
    assertEquals("unknown_schema", reason("{\"schema_version\":4,\"results\":[]}", 65536, 1 << 20));
  }

  @Test
  void sizeLimitsOneResultAndABatchEachByItsOwnLimit() throws Exception {
    List<byte[]> many = new ArrayList<>();
    for (int i = 0; i < 40; i++) many.add(result("d" + i, i).toBytes());
    byte[] batch = ResultBatch.join(many);
    assertTrue(batch.length > 4096 && batch.length < 65536);
    assertEquals(40, ResultBatch.parse(batch, 4096, 65536).size(), "a batch may exceed the limit of one result");
    assertEquals("oversized", assertThrows(InvalidMessage.class, () -> ResultBatch.parse(batch, 4096, 2048)).reason);
    // a v2 message over the one-result limit is refused unread, whatever the batch limit
    String padded = "{\"schema_version\":2,\"x\":\"" + "a".repeat(5000) + "\"}";
    assertEquals("oversized", reason(padded, 4096, 65536));
    // a body that claims to be a batch but is not one may not use the batch limit either
    String sneaky = "{\"schema_version\":3,\"schema_version\":2,\"x\":\"" + "a".repeat(5000) + "\"}";
    assertEquals("oversized", reason(sneaky, 4096, 65536));
  }
}
