package dev.inspection.config;

import ch.qos.logback.classic.pattern.ClassicConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import java.util.Map;

/**
 * {@code %ctx} of the text format: {@code node/role} from the logger context ({@link LogSetup}); "-" before the
 * configuration is read. (A slot's lines already say "slot N:" in their text; the slot is a field in JSON only.)
 */
public final class ContextConverter extends ClassicConverter {
  @Override
  public String convert(ILoggingEvent event) {
    Map<String, String> context = event.getLoggerContextVO() == null ? Map.of() : event.getLoggerContextVO().getPropertyMap();
    String node = context.get(LogSetup.NODE);
    return node == null ? "-" : node + "/" + context.get(LogSetup.ROLE);
  }
}
