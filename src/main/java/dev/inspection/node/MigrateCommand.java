package dev.inspection.node;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import dev.inspection.config.Secrets;
import dev.inspection.store.Db;
import dev.inspection.store.Migrations;
import dev.inspection.store.PgOptions;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.concurrent.TimeUnit;

/**
 * {@code java -jar node.jar migrate [--config FILE] [--key=value ...]}: applies the pending schema migrations with the
 * pg.* settings given (a role that may change the schema), seeds or checks the slot map, and exits. Nodes then run
 * with {@code pg.migrate=false} under a role without DDL rights (README "Upgrading").
 */
final class MigrateCommand {
  private MigrateCommand() {}

  /** The process exit code: 0 current, {@link Main#EXIT_CONFIG} configuration refused, {@link Main#EXIT_START_FAILED} otherwise. */
  static int run(Config config) {
    PgOptions pg = PgOptions.from(config).named("inspection-migrate");
    Vertx vertx = Vertx.vertx();
    Pool pool = Db.pool(vertx, pg, 1);
    try {
      int n = CredentialPolicy.checkPostgres(pool, config)
          .compose(v -> Migrations.apply(vertx, pool, pg, config.getInt(Keys.SLOTS_TOTAL), true))
          .toCompletionStage().toCompletableFuture().get(30, TimeUnit.MINUTES);
      System.out.println("schema " + pg.schema() + " on " + pg.where() + " is current: applied " + n + " migration(s)");
      return 0;
    } catch (Exception e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      System.err.println("error: migrating schema " + pg.schema() + " on " + pg.where() + " failed: " + Secrets.redact(String.valueOf(cause.getMessage())));
      return cause instanceof ConfigException ? Main.EXIT_CONFIG : Main.EXIT_START_FAILED;
    } finally {
      pool.close();
      vertx.close();
    }
  }
}
