package dev.inspection.config;

import ch.qos.logback.classic.pattern.ClassicConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import java.util.Map;
import org.slf4j.event.KeyValuePair;

/**
 * {@code %ctx} of the text format: {@code node/role} from the logger context ({@link LogSetup}), and
 * {@code slot=N} when the line comes from a slot's code (an slf4j key-value pair or MDC entry {@code slot});
 * "-" before the configuration is read.
 */
public final class ContextConverter extends ClassicConverter {
  @Override
  public String convert(ILoggingEvent event) {
    Map<String, String> context = event.getLoggerContextVO() == null ? Map.of() : event.getLoggerContextVO().getPropertyMap();
    String node = context.get(LogSetup.NODE);
    StringBuilder out = new StringBuilder(node == null ? "-" : node + "/" + context.get(LogSetup.ROLE));
    String slot = slot(event);
    if (slot != null) out.append(" slot=").append(slot);
    return out.toString();
  }

  private static String slot(ILoggingEvent event) {
    if (event.getKeyValuePairs() != null) {
      for (KeyValuePair kv : event.getKeyValuePairs()) if (LogSetup.SLOT.equals(kv.key)) return String.valueOf(kv.value);
    }
    return event.getMDCPropertyMap() == null ? null : event.getMDCPropertyMap().get(LogSetup.SLOT);
  }
}
