package dev.inspection.messaging;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

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
      if (source instanceof JsonObject o) return o.encode().getBytes(StandardCharsets.UTF_8);
      return String.valueOf(source).getBytes(StandardCharsets.UTF_8);
    }
  }

  /** The bytes a v3 message carries for these v2 bodies (each a JSON object). */
  public static byte[] join(List<byte[]> v2Bodies) {
    int size = HEAD.length + TAIL.length + Math.max(0, v2Bodies.size() - 1);
    for (byte[] b : v2Bodies) size += b.length;
    ByteArrayOutputStream out = new ByteArrayOutputStream(size);
    out.writeBytes(HEAD);
    for (int i = 0; i < v2Bodies.size(); i++) {
      if (i > 0) out.write(',');
      out.writeBytes(v2Bodies.get(i));
    }
    out.writeBytes(TAIL);
    return out.toByteArray();
  }

  /**
   * Reads a v2 or v3 body. A fault of the message as a whole (too large, not JSON, unknown version, no
   * results) throws, and the whole message is dead-lettered; a fault of one result of a v3 batch is that
   * item's {@code invalid}. {@code maxResultBytes} bounds a v2 message, {@code maxBatchBytes} a v3 one (a
   * body over {@code maxResultBytes} must open with {@code {"schema_version":3,} to be read at all).
   */
  public static List<Item> parse(byte[] body, int maxResultBytes, int maxBatchBytes) throws InvalidMessage {
    // only a body that opens as a batch may be larger than one result; anything else is refused unread
    if (body.length > (opensAsBatch(body) ? Math.max(maxResultBytes, maxBatchBytes) : maxResultBytes)) {
      throw oversized(body.length, maxResultBytes, maxBatchBytes);
    }
    JsonObject root = Envelope.readObject(body);
    Object sv = root.getValue("schema_version");
    if (!(sv instanceof Number n) || n.doubleValue() != SCHEMA_VERSION) {
      if (body.length > maxResultBytes) throw oversized(body.length, maxResultBytes, maxBatchBytes);
      return List.of(new Item(Envelope.fromJson(root), null, body));
    }
    Object results = root.getValue("results");
    if (results == null) throw new InvalidMessage("missing_field", "results is missing (a version 3 message is a batch of results)");
    if (!(results instanceof JsonArray array) || array.isEmpty()) throw new InvalidMessage("bad_field", "results must be a non-empty array");
    List<Item> items = new ArrayList<>(array.size());
    for (int i = 0; i < array.size(); i++) {
      Object r = array.getValue(i);
      try {
        if (!(r instanceof JsonObject o)) throw new InvalidMessage("bad_field", "results[" + i + "] is not a JSON object");
        items.add(new Item(Envelope.fromJson(o), null, o));
      } catch (InvalidMessage bad) {
        items.add(new Item(null, bad, r));
      }
    }
    return items;
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
