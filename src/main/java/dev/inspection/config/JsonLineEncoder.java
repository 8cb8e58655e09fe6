package dev.inspection.config;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.encoder.EncoderBase;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.event.KeyValuePair;

/**
 * {@code log.format=json}: one JSON object per line. Logback's own JsonEncoder writes epoch milliseconds and
 * nests everything; operators' log shippers want an ISO-8601 timestamp with date and zone and flat fields:
 * {@code timestamp, level, logger, thread, message}, the logger context's {@code node} and {@code role}
 * ({@link LogSetup}), every MDC entry and slf4j key-value pair (e.g. {@code slot}), and {@code exception}
 * with the whole stack as one string. Message and stack are masked like the text format ({@link Secrets#redact}).
 */
public final class JsonLineEncoder extends EncoderBase<ILoggingEvent> {
  /** Milliseconds and the zone's offset ({@code Z} in UTC), so every line parses as an OffsetDateTime. */
  static final DateTimeFormatter TIMESTAMP = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX");
  private static final byte[] NOTHING = new byte[0];

  private final ZoneId zone;

  public JsonLineEncoder() {
    this(ZoneId.systemDefault());
  }

  JsonLineEncoder(ZoneId zone) {
    this.zone = zone;
  }

  @Override
  public byte[] headerBytes() {
    return NOTHING;
  }

  @Override
  public byte[] footerBytes() {
    return NOTHING;
  }

  @Override
  public byte[] encode(ILoggingEvent event) {
    return line(event).getBytes(StandardCharsets.UTF_8);
  }

  String line(ILoggingEvent event) {
    // the fixed fields first, then context, MDC and key-value pairs; a later field never overwrites an earlier one
    Map<String, String> f = new LinkedHashMap<>();
    f.put("timestamp", TIMESTAMP.format(event.getInstant().atZone(zone)));
    f.put("level", event.getLevel().toString());
    f.put("logger", event.getLoggerName());
    f.put("thread", event.getThreadName());
    f.put("message", Secrets.redact(event.getFormattedMessage()));
    if (event.getLoggerContextVO() != null) {
      Map<String, String> context = event.getLoggerContextVO().getPropertyMap();
      for (String key : LogSetup.CONTEXT_FIELDS) if (context.get(key) != null) f.putIfAbsent(key, context.get(key));
    }
    if (event.getMDCPropertyMap() != null) event.getMDCPropertyMap().forEach(f::putIfAbsent);
    if (event.getKeyValuePairs() != null) {
      for (KeyValuePair kv : event.getKeyValuePairs()) f.putIfAbsent(kv.key, String.valueOf(kv.value));
    }
    IThrowableProxy thrown = event.getThrowableProxy();
    if (thrown != null) f.putIfAbsent("exception", Secrets.redact(ThrowableProxyUtil.asString(thrown)));
    StringBuilder out = new StringBuilder(256).append('{');
    f.forEach((k, v) -> {
      if (out.length() > 1) out.append(',');
      quote(out, k).append(':');
      quote(out, v);
    });
    return out.append("}\n").toString();
  }

  /** A JSON string: quotes, backslashes and every control character escaped (a stack's newlines and tabs included). */
  static StringBuilder quote(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20 || c == 0x2028 || c == 0x2029) out.append(String.format("\\u%04x", (int) c));
          else out.append(c);
        }
      }
    }
    return out.append('"');
  }
}
