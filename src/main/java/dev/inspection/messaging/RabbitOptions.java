package dev.inspection.messaging;

import dev.inspection.common.Pem;
import dev.inspection.config.Config;
import dev.inspection.config.Keys;

/**
 * Where and how to reach RabbitMQ: the {@code rabbit.*} keys, read once. With {@code ssl} the broker's
 * certificate is checked against {@code tlsCa} (a PEM file; empty = the JVM's trust store) and must name
 * {@code host}.
 */
public record RabbitOptions(String host, int port, String user, String password, String vhost, boolean ssl, String tlsCa) {
  /** Reads the keys (no file access: safe on the event loop). */
  public static RabbitOptions from(Config c) {
    return new RabbitOptions(c.get(Keys.RABBIT_HOST), c.getInt(Keys.RABBIT_PORT), c.get(Keys.RABBIT_USER), c.get(Keys.RABBIT_PASSWORD),
        c.get(Keys.RABBIT_VHOST), c.getBool(Keys.RABBIT_SSL), c.get(Keys.RABBIT_TLS_CA).trim());
  }

  /** {@link #from}, and a rabbit.tls.ca that is set must be a readable PEM certificate file (start-up validation; reads the file). */
  public static RabbitOptions validated(Config c) {
    RabbitOptions o = from(c);
    if (!o.tlsCa().isEmpty()) Pem.certificates(Keys.RABBIT_TLS_CA.name(), o.tlsCa());
    return o;
  }

  /** host:port/vhost, for messages (never the password). */
  public String where() {
    return (ssl ? "amqps://" : "") + host + ":" + port + vhost;
  }
}
