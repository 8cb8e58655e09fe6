package dev.inspection.messaging;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import dev.inspection.state.IsoInstant;
import io.vertx.core.json.EncodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.core.json.jackson.JacksonCodec;
import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;

/**
 * Envelope v2 (seed 000 §2.4). {@code message_id = {is_node}:{cycle_id}:{device_id}:{seq}} (INV-6, INV-12):
 * it can be rebuilt from the row, so a replay after a restart carries the same id.
 * The order of one device's results is {@code (cycle_id, seq)}.
 */
public record Envelope(
    String messageId, String deviceId, int slotId, long slotMapVersion, long resourceVersion, long planVersion,
    String isNode, long cycleId, long seq, Instant collectedAt, Priority priority, JsonObject payload) {

  public static final int SCHEMA_VERSION = 2;

  public static String messageId(String isNode, long cycleId, String deviceId, long seq) {
    return isNode + ":" + cycleId + ":" + deviceId + ":" + seq;
  }

  public JsonObject toJson() {
    return new JsonObject()
        .put("schema_version", SCHEMA_VERSION)
        .put("envelope", new JsonObject()
            .put("message_id", messageId)
            .put("device_id", deviceId)
            .put("slot_id", slotId)
            .put("slot_map_version", slotMapVersion)
            .put("resource_version", resourceVersion)
            .put("plan_version", planVersion)
            .put("is_node", isNode)
            .put("cycle_id", cycleId)
            .put("seq", seq)
            .put("collected_at", collectedAt.toString())
            .putNull("server_received_at")
            .put("priority", priority.wire))
        .put("payload", payload);
  }

  /**
   * {@link #toJson()} encoded, byte for byte, but written straight to UTF-8 by one streaming generator: the
   * probe encodes every result once, and building the JSON tree first then a String cost about a tenth of
   * its CPU (JFR, issue 11). Many in a row: {@link Writer}.
   */
  public byte[] toBytes() {
    try (Writer w = new Writer()) {
      return w.write(this);
    }
  }

  /**
   * Encodes envelopes one after another with one generator and one buffer (the probe's outbox encodes a whole group
   * commit so): creating and closing a generator per result was a fifth of the encoding's CPU (JFR, issue 11). Each
   * {@link #write} gives exactly what {@link #toBytes()} gives. Not thread-safe; after a failed write, make a new one.
   */
  public static final class Writer implements AutoCloseable {
    private final ByteArrayBuilder out = new ByteArrayBuilder(512);
    private final JsonGenerator g;

    public Writer() {
      try {
        g = JSON.createGenerator(out);
      } catch (IOException e) {
        throw new EncodeException("cannot create a JSON generator: " + e.getMessage());
      }
      g.setRootValueSeparator(null); // one envelope after another, nothing between them
    }

    public byte[] write(Envelope e) {
      try {
        e.writeTo(g);
        g.flush();
      } catch (IOException x) {
        throw new EncodeException("cannot encode the envelope of " + e.messageId + ": " + x.getMessage());
      }
      byte[] bytes = out.toByteArray();
      out.reset();
      return bytes;
    }

    @Override
    public void close() {
      try {
        g.close();
      } catch (IOException ignored) {
        // a byte buffer: nothing to release
      }
    }
  }

  /** The member names, encoded once: Jackson otherwise encodes each name's characters again for every result (issue 11). */
  private static final SerializedString SCHEMA_VERSION_NAME = new SerializedString("schema_version");
  private static final SerializedString ENVELOPE = new SerializedString("envelope");
  private static final SerializedString MESSAGE_ID = new SerializedString("message_id");
  private static final SerializedString DEVICE_ID = new SerializedString("device_id");
  private static final SerializedString SLOT_ID = new SerializedString("slot_id");
  private static final SerializedString SLOT_MAP_VERSION = new SerializedString("slot_map_version");
  private static final SerializedString RESOURCE_VERSION = new SerializedString("resource_version");
  private static final SerializedString PLAN_VERSION = new SerializedString("plan_version");
  private static final SerializedString IS_NODE = new SerializedString("is_node");
  private static final SerializedString CYCLE_ID = new SerializedString("cycle_id");
  private static final SerializedString SEQ = new SerializedString("seq");
  private static final SerializedString COLLECTED_AT = new SerializedString("collected_at");
  private static final SerializedString SERVER_RECEIVED_AT = new SerializedString("server_received_at");
  private static final SerializedString PRIORITY = new SerializedString("priority");
  private static final SerializedString PAYLOAD = new SerializedString("payload");

  private void writeTo(JsonGenerator g) throws IOException {
    g.writeStartObject();
    g.writeFieldName(SCHEMA_VERSION_NAME);
    g.writeNumber(SCHEMA_VERSION);
    g.writeFieldName(ENVELOPE);
    g.writeStartObject();
    g.writeFieldName(MESSAGE_ID);
    g.writeString(messageId);
    g.writeFieldName(DEVICE_ID);
    g.writeString(deviceId);
    g.writeFieldName(SLOT_ID);
    g.writeNumber(slotId);
    g.writeFieldName(SLOT_MAP_VERSION);
    g.writeNumber(slotMapVersion);
    g.writeFieldName(RESOURCE_VERSION);
    g.writeNumber(resourceVersion);
    g.writeFieldName(PLAN_VERSION);
    g.writeNumber(planVersion);
    g.writeFieldName(IS_NODE);
    g.writeString(isNode);
    g.writeFieldName(CYCLE_ID);
    g.writeNumber(cycleId);
    g.writeFieldName(SEQ);
    g.writeNumber(seq);
    g.writeFieldName(COLLECTED_AT);
    g.writeString(IsoInstant.format(collectedAt));
    g.writeFieldName(SERVER_RECEIVED_AT);
    g.writeNull();
    g.writeFieldName(PRIORITY);
    g.writeString(priority.wire);
    g.writeEndObject();
    g.writeFieldName(PAYLOAD);
    if (payload == null) g.writeNull();
    else JacksonCodec.encodeJson(payload, g);
    g.writeEndObject();
  }

  private static final JsonFactory JSON = new JsonFactory();

  /**
   * Parses and checks one v2 message body, by the same streaming read as the worker's ({@link ResultBatch#parse}).
   * Every way a body can be wrong ends in an {@link InvalidMessage} whose reason is one of: oversized,
   * malformed_json, unknown_schema (also a batch of results, version 3), missing_field, bad_field.
   */
  public static Envelope parse(byte[] body, int maxBytes) throws InvalidMessage {
    if (body.length > maxBytes) {
      throw new InvalidMessage("oversized", "message of " + body.length + " bytes exceeds the limit of " + maxBytes
          + " bytes (worker.max.message.bytes)");
    }
    List<ResultBatch.Item> items = ResultBatch.parse(body, maxBytes, maxBytes);
    if (items.size() != 1 || items.get(0).source() != body) {
      throw new InvalidMessage("unknown_schema", "a batch of results (version " + ResultBatch.SCHEMA_VERSION + ") where one result (version "
          + SCHEMA_VERSION + ") was expected");
    }
    return items.get(0).envelope();
  }

  /** Checks one v2 message already read as JSON (a whole v2 body, or one result of a v3 batch). */
  public static Envelope fromJson(JsonObject root) throws InvalidMessage {
    return check(root.getValue("schema_version"), root.getValue("envelope"), root.getValue("payload"));
  }

  /**
   * The envelope's fields as read, before they are checked: a JSON object's ({@code JsonObject::getValue}) or the
   * fields {@link ResultBatch} streamed out of a body without building a tree of it. A JSON null reads as absent.
   */
  interface Fields {
    Object get(String key);
  }

  /**
   * Checks one v2 message from its three members as read (each a JSON value: null when absent): {@code envelope} a
   * {@link JsonObject} or streamed {@link Fields}, {@code payload} a {@link JsonObject} when it is an object. The one
   * place every way a result can be wrong is named, whichever way it was read.
   */
  static Envelope check(Object sv, Object envelope, Object payloadValue) throws InvalidMessage {
    if (sv == null) throw new InvalidMessage("missing_field", "schema_version is missing");
    if (!(sv instanceof Number n) || n.intValue() != SCHEMA_VERSION || n.doubleValue() != SCHEMA_VERSION) {
      throw new InvalidMessage("unknown_schema", "schema_version " + sv + " is not supported here (a result is version " + SCHEMA_VERSION
          + "; a batch of results is version " + ResultBatch.SCHEMA_VERSION + ")");
    }
    if (envelope == null) throw new InvalidMessage("missing_field", "envelope is missing");
    Fields env;
    if (envelope instanceof JsonObject j) env = j::getValue;
    else if (envelope instanceof Fields f) env = f;
    else throw new InvalidMessage("bad_field", "envelope must be a JSON object");
    if (payloadValue == null) throw new InvalidMessage("missing_field", "payload is missing");
    if (!(payloadValue instanceof JsonObject payload)) throw new InvalidMessage("bad_field", "payload must be a JSON object");
    String deviceId = string(env, "device_id");
    if (deviceId.isEmpty() || deviceId.length() > 64) throw new InvalidMessage("bad_field", "device_id must be 1..64 characters");
    String isNode = string(env, "is_node");
    long cycleId = number(env, "cycle_id");
    long seq = number(env, "seq");
    if (seq < 0 || cycleId < 0) throw new InvalidMessage("bad_field", "cycle_id and seq must not be negative");
    String messageId = string(env, "message_id");
    String expected = messageId(isNode, cycleId, deviceId, seq);
    if (!messageId.equals(expected)) {
      throw new InvalidMessage("bad_field", "message_id '" + shorten(messageId) + "' does not match is_node:cycle_id:device_id:seq ('" + shorten(expected) + "')");
    }
    long slot = number(env, "slot_id");
    Instant collectedAt;
    try {
      collectedAt = IsoInstant.parse(string(env, "collected_at"));
    } catch (DateTimeParseException e) {
      throw new InvalidMessage("bad_field", "collected_at is not an ISO-8601 instant");
    }
    Priority prio = Priority.parse(string(env, "priority"));
    if (prio == null) throw new InvalidMessage("bad_field", "priority must be 'high', 'normal' or 'low'");
    return new Envelope(messageId, deviceId, (int) slot, optNumber(env, "slot_map_version"), optNumber(env, "resource_version"),
        optNumber(env, "plan_version"), isNode, cycleId, seq, collectedAt, prio, payload);
  }

  private static String string(Fields o, String key) throws InvalidMessage {
    Object v = o.get(key);
    if (v == null) throw new InvalidMessage("missing_field", "envelope." + key + " is missing");
    if (!(v instanceof String s)) throw new InvalidMessage("bad_field", "envelope." + key + " must be a string");
    return s;
  }

  private static long number(Fields o, String key) throws InvalidMessage {
    Object v = o.get(key);
    if (v == null) throw new InvalidMessage("missing_field", "envelope." + key + " is missing");
    if (!(v instanceof Number n) || n.doubleValue() != n.longValue()) {
      throw new InvalidMessage("bad_field", "envelope." + key + " must be an integer");
    }
    return n.longValue();
  }

  private static long optNumber(Fields o, String key) throws InvalidMessage {
    return o.get(key) == null ? 0 : number(o, key);
  }

  private static String shorten(String s) {
    if (s == null) return "";
    return s.length() > 120 ? s.substring(0, 120) + "…" : s;
  }
}
