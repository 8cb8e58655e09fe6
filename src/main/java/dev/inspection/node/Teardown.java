package dev.inspection.node;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import dev.inspection.messaging.RabbitConnector;
import dev.inspection.messaging.RabbitOptions;
import dev.inspection.messaging.Topology;
import dev.inspection.store.Db;
import dev.inspection.store.PgOptions;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.concurrent.TimeUnit;

/**
 * Removes everything one configuration created: its slot queues, exchanges and dead-letter queue, and
 * its PostgreSQL schema. For resetting a demo or a benchmark:
 * {@code java -cp node.jar dev.inspection.node.Teardown --pg.schema=bench --topology.prefix=bench --slots.total=256}.
 * Destructive: it prints what it removes.
 */
public final class Teardown {
  private Teardown() {}

  public static void main(String[] args) throws Exception {
    Config config;
    try {
      config = Config.load(args, System.getenv());
    } catch (ConfigException e) {
      System.err.println("error: " + e.getMessage());
      System.exit(2);
      return;
    }
    var topology = Topology.of(config);
    try (Connection c = RabbitConnector.factory(RabbitOptions.from(config)).newConnection("teardown"); Channel ch = c.createChannel()) {
      topology.delete(ch);
      System.out.println("deleted " + (2 * topology.totalSlots() + 1) + " queues and 2 exchanges with prefix '" + config.get(Keys.TOPOLOGY_PREFIX) + "'");
    }
    Vertx vertx = Vertx.vertx();
    try {
      Pool pool = Db.pool(vertx, PgOptions.from(config), 1);
      pool.query("DROP SCHEMA IF EXISTS " + config.get(Keys.PG_SCHEMA) + " CASCADE").execute().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
      System.out.println("dropped schema " + config.get(Keys.PG_SCHEMA));
      pool.close();
    } finally {
      vertx.close();
    }
  }
}
