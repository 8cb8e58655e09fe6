package dev.inspection.node;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import dev.inspection.config.Secrets;
import dev.inspection.messaging.RabbitConnector;
import dev.inspection.messaging.RabbitOptions;
import dev.inspection.messaging.Topology;
import dev.inspection.store.Db;
import dev.inspection.store.PgOptions;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Removes everything one configuration created: its slot queues, exchanges and dead-letter queue, and
 * its PostgreSQL schema. For resetting a demo or a benchmark:
 * {@code java -cp node.jar dev.inspection.node.Teardown --yes --pg.schema=bench --topology.prefix=bench --slots.total=256}.
 * Destructive: without {@code --yes} it only says what it would remove and exits with code 2; with it, it
 * prints what it removes.
 */
public final class Teardown {
  private Teardown() {}

  static final String USAGE = "usage: java -cp node.jar dev.inspection.node.Teardown --yes [--config FILE] [--key=value ...]\n"
      + "Deletes the slot queues, exchanges, dead-letter and shed queues of topology.prefix and DROPs the PostgreSQL schema pg.schema (CASCADE).\n";

  /** What a run would remove, said before anything is removed. */
  static String plan(Config config) {
    Topology t = Topology.of(config);
    return (2 * t.totalSlots() + 2) + " queues and 2 exchanges with prefix '" + config.get(Keys.TOPOLOGY_PREFIX) + "' on "
        + RabbitOptions.from(config).where() + ", and schema " + config.get(Keys.PG_SCHEMA)
        + " (with every table and row in it) in " + PgOptions.from(config).where();
  }

  public static void main(String[] args) throws Exception {
    List<String> rest = new ArrayList<>(List.of(args));
    if (rest.contains("--help") || rest.contains("-h")) {
      System.out.print(USAGE);
      return;
    }
    boolean yes = rest.remove("--yes");
    Config config;
    try {
      config = Config.load(rest.toArray(String[]::new), System.getenv());
    } catch (ConfigException e) {
      System.err.println("error: " + Secrets.redact(e.getMessage()));
      System.exit(2);
      return;
    }
    if (!yes) {
      System.err.println("Teardown would delete " + plan(config) + ".\nNothing was removed: add --yes to confirm.");
      System.exit(2);
      return;
    }
    System.out.println("removing " + plan(config));
    var topology = Topology.of(config);
    try (Connection c = RabbitConnector.open(RabbitOptions.from(config), "teardown"); Channel ch = c.createChannel()) {
      topology.delete(ch);
      System.out.println("deleted " + (2 * topology.totalSlots() + 2) + " queues and 2 exchanges with prefix '" + config.get(Keys.TOPOLOGY_PREFIX) + "'");
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
