package dev.inspection.messaging;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.json.jackson.JacksonCodec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Schema v3: several results of one slot and priority in one AMQP message (issue 11), so the broker and
 * the worker handle one message where they handled many. The body is
 * {@code {"schema_version":3,"results":[r1,r2,...]}} where every {@code r} is a complete v2 message
 * ({@link Envelope}) with its own {@code message_id} (INV-6). The probe builds it by joining the v2 bodies
 * it already holds, without re-encoding; a worker reads v2 and v3 side by side (INV-7) and dead-letters a bad
 * result of a batch on its own, as a v2 message, while the others commit.
 */
public final class ResultBatch {
  public static final int SCHEMA_VERSION = 3;

  private static final byte[] HEAD = "{\"schema_version\":3,\"results\":[".getBytes(StandardCharsets.UTF_8);
  /** How every batch opens; a body larger than worker.max.message.bytes is read only when it opens so. */
  private static final byte[] OPENING = "{\"schema_version\":3,".getBytes(StandardCharsets.UTF_8);
  private static final byte[] TAIL = "]}".getBytes(StandardCharsets.UTF_8);

  private ResultBatch() {}

  /**
   * One result of a received message: its envelope, or why it cannot be processed. {@link #body} is the
   * result on its own (the whole message for v2), what a dead letter keeps; it is encoded only when asked.
   */
  public record Item(Envelope envelope, InvalidMessage invalid, Object source) {
    public byte[] body() {
      if (source instanceof byte[] b) return b;
      if (source instanceof Slice s) return s.copy();
      return Json.encode(source).getBytes(StandardCharsets.UTF_8);
    }
  }

  /**
   * The bytes a v3 message carries for these v2 bodies (each a JSON object), written into one array of the exact size: a
   * stream's copy of its buffer at the end was 2.5 % of the bytes a capacity run's node allocated (JFR, 2026-12-07).
   */
  public static byte[] join(List<byte[]> v2Bodies) {
    int size = HEAD.length + TAIL.length + Math.max(0, v2Bodies.size() - 1);
    for (byte[] b : v2Bodies) size += b.length;
    byte[] out = new byte[size];
    System.arraycopy(HEAD, 0, out, 0, HEAD.length);
    int at = HEAD.length;
    for (int i = 0; i < v2Bodies.size(); i++) {
      if (i > 0) out[at++] = ',';
      byte[] b = v2Bodies.get(i);
      System.arraycopy(b, 0, out, at, b.length);
      at += b.length;
    }
    System.arraycopy(TAIL, 0, out, at, TAIL.length);
    return out;
  }

  /**
   * Reads a v2 or v3 body. A fault of the message as a whole (too large, not JSON, unknown version, no
   * results) throws, and the whole message is dead-lettered; a fault of one result of a v3 batch is that
   * item's {@code invalid}. {@code maxResultBytes} bounds a v2 message, {@code maxBatchBytes} a v3 one (a
   * body over {@code maxResultBytes} must open with {@code {"schema_version":3,} to be read at all).
   *
   * <p>The body is read in one pass of a streaming parser: the envelope's fields go straight into {@link Streamed}
   * and only each payload becomes a JSON tree, and an item's {@link Item#body} is its own bytes of the message.
   * Reading every result into a tree first and looking its fields up again was a tenth of the node's samples at
   * capacity (issue 11). What it accepts and how it names a fault are {@link Envelope#check}'s, as for
   * {@link Envelope#fromJson}.
   */
  public static List<Item> parse(byte[] body, int maxResultBytes, int maxBatchBytes) throws InvalidMessage {
    // only a body that opens as a batch may be larger than one result; anything else is refused unread
    if (body.length > (opensAsBatch(body) ? Math.max(maxResultBytes, maxBatchBytes) : maxResultBytes)) {
      throw oversized(body.length, maxResultBytes, maxBatchBytes);
    }
    Root root;
    try (JsonParser p = JacksonCodec.createParser(Buffer.buffer(body))) {
      if (p.nextToken() != JsonToken.START_OBJECT) throw new InvalidMessage("malformed_json", "body is not a JSON object");
      root = readRoot(p, body);
      if (p.nextToken() != null) throw new InvalidMessage("malformed_json", "body is not a JSON object: unexpected content after it");
    } catch (IOException e) {
      throw new InvalidMessage("malformed_json", "body is not a JSON object: " + shorten(e.getMessage()));
    }
    if (!(root.schemaVersion instanceof Number n) || n.doubleValue() != SCHEMA_VERSION) {
      if (body.length > maxResultBytes) throw oversized(body.length, maxResultBytes, maxBatchBytes);
      return List.of(new Item(root.check(), null, body));
    }
    if (root.results == null) throw new InvalidMessage("missing_field", "results is missing (a version 3 message is a batch of results)");
    if (!(root.results instanceof List<?> results) || results.isEmpty()) throw new InvalidMessage("bad_field", "results must be a non-empty array");
    List<Item> items = new ArrayList<>(results.size());
    for (int i = 0; i < results.size(); i++) {
      Object r = results.get(i);
      try {
        if (!(r instanceof Result o)) throw new InvalidMessage("bad_field", "results[" + i + "] is not a JSON object");
        items.add(new Item(o.members().check(), null, o.bytes()));
      } catch (InvalidMessage bad) {
        items.add(new Item(null, bad, r instanceof Result o ? o.bytes() : r));
      }
    }
    return items;
  }

  /** The three members a result is checked by, as read (a JSON value each, null when absent). */
  private static class Members {
    Object schemaVersion;
    Object envelope;
    Object payload;

    Envelope check() throws InvalidMessage {
      return Envelope.check(schemaVersion, envelope, payload);
    }

    /** Reads the parser's current member into this if it is one of the three ({@code t} its first token); false for any other. */
    boolean read(JsonParser p, String name, JsonToken t) throws IOException {
      switch (name) {
        case "schema_version" -> schemaVersion = member(p);
        case "envelope" -> envelope = t == JsonToken.START_OBJECT ? envelope(p) : member(p);
        case "payload" -> payload = t == JsonToken.START_OBJECT ? new JsonObject(map(p)) : member(p);
        default -> {
          return false;
        }
      }
      return true;
    }
  }

  /** A body's top object: a v2 result's three members, or a v3 batch's schema_version and results. */
  private static final class Root extends Members {
    /** A list of {@link Result} (an object) or other JSON values, when results is an array; else its value. */
    Object results;
  }

  /** One object of a batch's results: its members as read and its own bytes of the message (a dead letter's body). */
  private record Result(Members members, Slice bytes) {}

  /** Bytes {@code from} to {@code to} of a message, copied out only when asked for (a dead letter's body). */
  private record Slice(byte[] body, int from, int to) {
    byte[] copy() {
      return Arrays.copyOfRange(body, from, to);
    }
  }

  /** The envelope's fields a result is checked by, streamed; any other member is skipped. */
  private static final class Streamed implements Envelope.Fields {
    private final Object[] values = new Object[11];

    /** A field's place in {@link #values}, -1 for a member the check does not read. */
    static int index(String key) {
      return switch (key) {
        case "device_id" -> 0;
        case "is_node" -> 1;
        case "cycle_id" -> 2;
        case "seq" -> 3;
        case "message_id" -> 4;
        case "slot_id" -> 5;
        case "collected_at" -> 6;
        case "priority" -> 7;
        case "slot_map_version" -> 8;
        case "resource_version" -> 9;
        case "plan_version" -> 10;
        default -> -1;
      };
    }

    @Override
    public Object get(String key) {
      int i = index(key);
      return i < 0 ? null : values[i];
    }
  }

  /** An object or array where the envelope wants a string or number: kept only to be refused as the wrong type. */
  private static final Object NOT_SCALAR = new Object();

  private static Root readRoot(JsonParser p, byte[] body) throws IOException {
    Root root = new Root();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      JsonToken t = p.nextToken();
      if (root.read(p, name, t)) continue;
      if (name.equals("results")) root.results = t == JsonToken.START_ARRAY ? results(p, body) : member(p);
      else p.skipChildren();
    }
    return root;
  }

  private static List<Object> results(JsonParser p, byte[] body) throws IOException {
    List<Object> out = new ArrayList<>();
    for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
      if (t != JsonToken.START_OBJECT) {
        out.add(member(p));
        continue;
      }
      int from = (int) p.currentTokenLocation().getByteOffset();
      Members m = new Members();
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        if (!m.read(p, name, p.nextToken())) p.skipChildren();
      }
      int to = (int) p.currentLocation().getByteOffset(); // just after the object's closing brace
      out.add(new Result(m, new Slice(body, from, to)));
    }
    return out;
  }

  private static Streamed envelope(JsonParser p) throws IOException {
    Streamed s = new Streamed();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      int i = Streamed.index(p.currentName());
      JsonToken t = p.nextToken();
      if (i < 0) p.skipChildren();
      else if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
        p.skipChildren();
        s.values[i] = NOT_SCALAR;
      } else s.values[i] = value(p); // the last of a repeated member counts, as in a JSON object
    }
    return s;
  }

  /** A member's value as a JSON object hands it out: objects and arrays wrapped ({@code JsonObject.getValue}). */
  private static Object member(JsonParser p) throws IOException {
    Object v = value(p);
    if (v instanceof Map<?, ?>) return new JsonObject(cast(v));
    if (v instanceof List<?> l) return new JsonArray(l);
    return v;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> cast(Object map) {
    return (Map<String, Object>) map;
  }

  /** The value at the parser's current token as Vert.x's JSON tree holds it inside an object (objects as maps, arrays as lists). */
  private static Object value(JsonParser p) throws IOException {
    return switch (p.currentToken()) {
      case START_OBJECT -> map(p);
      case START_ARRAY -> {
        List<Object> list = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) list.add(value(p));
        yield list;
      }
      case VALUE_STRING -> p.getText();
      case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> p.getNumberValue();
      case VALUE_TRUE -> Boolean.TRUE;
      case VALUE_FALSE -> Boolean.FALSE;
      case VALUE_NULL -> null;
      default -> throw new IOException("unexpected token " + p.currentToken());
    };
  }

  private static Map<String, Object> map(JsonParser p) throws IOException {
    Map<String, Object> m = new LinkedHashMap<>();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      p.nextToken();
      m.put(name, value(p));
    }
    return m;
  }

  private static String shorten(String s) {
    if (s == null) return "";
    return s.length() > 120 ? s.substring(0, 120) + "…" : s;
  }

  private static boolean opensAsBatch(byte[] body) {
    if (body.length < OPENING.length) return false;
    for (int i = 0; i < OPENING.length; i++) if (body[i] != OPENING[i]) return false;
    return true;
  }

  private static InvalidMessage oversized(int length, int maxResultBytes, int maxBatchBytes) {
    return new InvalidMessage("oversized", "message of " + length + " bytes exceeds the limit (" + maxResultBytes
        + " bytes for one result, worker.max.message.bytes; " + maxBatchBytes + " bytes for a batch, worker.max.batch.bytes)");
  }
}
