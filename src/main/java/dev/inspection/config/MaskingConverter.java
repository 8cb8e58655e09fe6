package dev.inspection.config;

import ch.qos.logback.classic.pattern.MessageConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;

/**
 * Logback's {@code %msg} with {@link Secrets#redact} applied (logback.xml maps {@code %msg} to it), so a URL
 * with a password in it never reaches a log line, whichever library wrote the message.
 */
public final class MaskingConverter extends MessageConverter {
  @Override
  public String convert(ILoggingEvent event) {
    return Secrets.redact(super.convert(event));
  }
}
