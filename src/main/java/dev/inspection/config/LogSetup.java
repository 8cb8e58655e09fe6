package dev.inspection.config;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.OutputStreamAppender;
import java.util.List;
import java.util.Locale;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * Applies the logging keys once the configuration is read: the node's id and role go into the logger
 * context (so every line carries them, whichever thread logs: Vert.x event loops do not inherit an MDC),
 * {@code log.format=json} swaps the console encoder for {@link JsonLineEncoder}, and java.util.logging
 * (the PostgreSQL JDBC driver under Flyway, among others) is routed through slf4j so no library prints an
 * exception without the log header.
 */
public final class LogSetup {
  private LogSetup() {}

  public static final String NODE = "node";
  public static final String ROLE = "role";
  /** The key a slot's code logs its slot under (an slf4j key-value pair): a field of a JSON line (its text already says "slot N:"). */
  public static final String SLOT = "slot";
  static final List<String> CONTEXT_FIELDS = List.of(NODE, ROLE);
  /** The console appender of logback.xml. */
  static final String APPENDER = "OUT";

  public enum Format { TEXT, JSON }

  /** log.format, or a ConfigException naming the key. */
  public static Format format(Config config) {
    String v = config.get(Keys.LOG_FORMAT).trim().toLowerCase(Locale.ROOT);
    return switch (v) {
      case "text" -> Format.TEXT;
      case "json" -> Format.JSON;
      default -> throw new ConfigException(Keys.LOG_FORMAT.name() + " must be text or json, not '" + config.get(Keys.LOG_FORMAT) + "'");
    };
  }

  public static void install(Config config) {
    if (!SLF4JBridgeHandler.isInstalled()) {
      SLF4JBridgeHandler.removeHandlersForRootLogger(); // JUL's console handler would print the same record bare
      SLF4JBridgeHandler.install();
    }
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) return;
    context.putProperty(NODE, config.nodeId());
    context.putProperty(ROLE, config.role().name().toLowerCase(Locale.ROOT));
    if (format(config) == Format.JSON) useJson(context);
  }

  private static void useJson(LoggerContext context) {
    Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    Appender<ILoggingEvent> appender = root.getAppender(APPENDER);
    if (!(appender instanceof OutputStreamAppender<ILoggingEvent> out)) return;
    JsonLineEncoder json = new JsonLineEncoder();
    json.setContext(context);
    json.start();
    out.stop();
    out.setEncoder(json);
    out.start();
  }
}
