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

  /**
   * The streaming read against the JSON tree it replaced ({@link #treeParse}, the old code kept here as the reference):
   * every variant of a result, as a v2 message and inside a batch between two good results, gives the same envelope or
   * the same fault (reason and message); a fault of the whole message the same reason.
   */
  @Test
  void theStreamingReadAcceptsAndRefusesExactlyWhatTheJsonTreeDid() throws Exception {
    List<String> variants = variants();
    assertTrue(variants.size() > 150, "variants: " + variants.size());
    int refused = 0;
    for (String v : variants) {
      List<String> bodies = List.of(v, "{\"schema_version\":3,\"results\":[" + new String(result("a", 1).toBytes(), StandardCharsets.UTF_8) + "," + v + ","
          + new String(result("c", 2).toBytes(), StandardCharsets.UTF_8) + "]}");
      for (String body : bodies) {
        String expected;
        String actual;
        try {
          expected = describe(treeParse(bytes(body)));
        } catch (InvalidMessage e) {
          expected = "whole message: " + e.reason;
        }
        try {
          actual = describe(ResultBatch.parse(bytes(body), 65536, 1 << 20));
        } catch (InvalidMessage e) {
          actual = "whole message: " + e.reason;
        }
        assertEquals(expected, actual, body);
        if (expected.contains("invalid")) refused++;
      }
    }
    assertTrue(refused > 100, "most variants are faults of some kind: " + refused);
  }

  @Test
  void aResultOfABatchKeepsItsOwnBytesOfTheMessage() throws Exception {
    String odd = "{ \"payload\" : {\"status\":\"DOWN\", \"x\": [1, 2.5, {\"y\": null}]}, \"schema_version\": 2, \"envelope\": "
        + result("b", 9).toJson().getJsonObject("envelope").encode() + " }";
    byte[] body = bytes("{\"schema_version\":3,\"results\":[ " + odd + " , 7 ]}");
    List<ResultBatch.Item> items = ResultBatch.parse(body, 65536, 1 << 20);
    assertEquals(odd, new String(items.get(0).body(), StandardCharsets.UTF_8), "the result's own bytes, spaces and member order as sent");
    assertEquals(new JsonObject(odd).getJsonObject("payload"), items.get(0).envelope().payload());
    assertEquals("7", new String(items.get(1).body(), StandardCharsets.UTF_8), "a result that is not an object is kept as its JSON");
  }

  private static String describe(List<ResultBatch.Item> items) {
    StringBuilder b = new StringBuilder();
    for (ResultBatch.Item i : items) {
      b.append(i.envelope() != null ? "ok " + i.envelope() : "invalid " + i.invalid().reason + ": " + i.invalid().getMessage()).append('\n');
    }
    return b.toString();
  }

  /** The JSON-tree reading the streaming one replaced (issue 11), as it was: the reference of the test above. */
  private static List<ResultBatch.Item> treeParse(byte[] body) throws InvalidMessage {
    JsonObject root;
    try {
      root = new JsonObject(io.vertx.core.buffer.Buffer.buffer(body));
    } catch (io.vertx.core.json.DecodeException | ClassCastException e) {
      throw new InvalidMessage("malformed_json", "body is not a JSON object: " + e.getMessage());
    }
    Object sv = root.getValue("schema_version");
    if (!(sv instanceof Number n) || n.doubleValue() != ResultBatch.SCHEMA_VERSION) return List.of(new ResultBatch.Item(Envelope.fromJson(root), null, body));
    Object results = root.getValue("results");
    if (results == null) throw new InvalidMessage("missing_field", "results is missing");
    if (!(results instanceof io.vertx.core.json.JsonArray array) || array.isEmpty()) throw new InvalidMessage("bad_field", "results must be a non-empty array");
    List<ResultBatch.Item> items = new ArrayList<>();
    for (int i = 0; i < array.size(); i++) {
      Object r = array.getValue(i);
      try {
        if (!(r instanceof JsonObject o)) throw new InvalidMessage("bad_field", "results[" + i + "] is not a JSON object");
        items.add(new ResultBatch.Item(Envelope.fromJson(o), null, o));
      } catch (InvalidMessage bad) {
        items.add(new ResultBatch.Item(null, bad, r));
      }
    }
    return items;
  }

  /** A good v2 result and one change of it per member and kind of value, plus repeated members, nulls and nested payloads. */
  private static List<String> variants() {
    Object[] values = {null, "x", "", "2026-12-01T10:00:00Z", 5, 5.0, 5.5, -1, 9_000_000_000L, new java.math.BigInteger("99999999999999999999"), true,
        new JsonObject().put("a", 1), new io.vertx.core.json.JsonArray().add(1), "high", "normal", "p1:5000:d:3", "p1", 2, 2.0, 3};
    List<String> out = new ArrayList<>();
    JsonObject good = result("d", 3).toJson();
    out.add(good.encode());
    for (String key : List.of("schema_version", "envelope", "payload")) {
      JsonObject j = good.copy();
      j.remove(key);
      out.add(j.encode());
      for (Object v : values) out.add(good.copy().put(key, v).encode());
    }
    for (String key : good.getJsonObject("envelope").fieldNames()) {
      JsonObject j = good.copy();
      j.getJsonObject("envelope").remove(key);
      out.add(j.encode());
      for (Object v : values) {
        JsonObject k = good.copy();
        k.getJsonObject("envelope").put(key, v);
        out.add(k.encode());
      }
    }
    String g = good.encode();
    out.add(g.replace("\"seq\":3", "\"seq\":3,\"seq\":4")); // a repeated member: the last counts
    out.add(g.replace("\"seq\":3", "\"seq\":\"3\",\"seq\":3"));
    out.add(g.replace("{\"schema_version\":2", "{\"schema_version\":7,\"schema_version\":2"));
    out.add(g.replace("\"payload\":{", "\"payload\":{\"nested\":{\"a\":[1,{\"b\":null}],\"c\":1.25e3},"));
    out.add(g.replace("\"envelope\":{", "\"envelope\":{\"extra\":{\"deep\":[[]]},"));
    out.add(g.substring(0, g.length() - 1) + ",\"results\":[1]}");
    out.add("[]");
    out.add("17");
    out.add(g + " {}");
    out.add(g.substring(0, g.length() - 3));
    return out;
  }
}
