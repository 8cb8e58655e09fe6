package dev.inspection.messaging;

import dev.inspection.config.Config;
import dev.inspection.config.Keys;

/** Where and how to reach RabbitMQ: the {@code rabbit.*} keys, read once. */
public record RabbitOptions(String host, int port, String user, String password, String vhost, boolean ssl) {
  public static RabbitOptions from(Config c) {
    return new RabbitOptions(c.get(Keys.RABBIT_HOST), c.getInt(Keys.RABBIT_PORT), c.get(Keys.RABBIT_USER), c.get(Keys.RABBIT_PASSWORD),
        c.get(Keys.RABBIT_VHOST), c.getBool(Keys.RABBIT_SSL));
  }

  /** host:port/vhost, for messages (never the password). */
  public String where() {
    return host + ":" + port + vhost;
  }
}
