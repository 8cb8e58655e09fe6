package dev.inspection.config;

import ch.qos.logback.classic.pattern.ThrowableProxyConverter;
import ch.qos.logback.classic.spi.IThrowableProxy;

/** Logback's {@code %ex} with {@link Secrets#redact} applied: an exception message that quotes a URL with a password is masked too. */
public final class MaskingThrowableConverter extends ThrowableProxyConverter {
  @Override
  protected String throwableProxyToString(IThrowableProxy tp) {
    return Secrets.redact(super.throwableProxyToString(tp));
  }
}
