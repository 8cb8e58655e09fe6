package dev.inspection.node;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;

/**
 * Safe defaults (issue 10 item 7): outside {@code demo.mode} a node refuses the broker's well-known
 * {@code guest} account and a PostgreSQL superuser, unless {@code security.allow.insecure.credentials=true}
 * says this is a local test set-up. Each refusal is a {@link ConfigException} naming the key and the fix.
 */
public final class CredentialPolicy {
  private CredentialPolicy() {}

  static final String IS_SUPERUSER = "SELECT rolsuper FROM pg_roles WHERE rolname = current_user";

  /** Whether this configuration may run with insecure credentials (demo mode, or said so explicitly). */
  public static boolean insecureAllowed(Config c) {
    return c.getBool(Keys.DEMO_MODE) || c.getBool(Keys.SECURITY_ALLOW_INSECURE_CREDENTIALS);
  }

  /** The broker part: decided from the configuration alone. */
  public static void checkRabbit(Config c) {
    if (insecureAllowed(c)) return;
    if ("guest".equals(c.get(Keys.RABBIT_USER).trim())) {
      throw new ConfigException("rabbit.user is 'guest', RabbitMQ's well-known default account (its password is public): create a user"
          + " for the node (rabbitmqctl add_user / set_permissions on rabbit.vhost) and set rabbit.user and rabbit.password"
          + " (INSPECT_RABBIT_PASSWORD_FILE), or set " + Keys.SECURITY_ALLOW_INSECURE_CREDENTIALS.name() + "=true for a local test set-up"
          + " (demo.mode allows it too)");
    }
  }

  /** The database part: asks PostgreSQL whether pg.user is a superuser. Fails with a ConfigException when it is and that is not allowed. */
  public static Future<Void> checkPostgres(Pool pool, Config c) {
    if (insecureAllowed(c)) return Future.succeededFuture();
    return pool.query(IS_SUPERUSER).execute().compose(rows -> decide(superuser(rows), c));
  }

  private static boolean superuser(RowSet<Row> rows) {
    for (Row r : rows) return Boolean.TRUE.equals(r.getBoolean(0));
    return false;
  }

  /** Pure: the verdict on a known role attribute. */
  static Future<Void> decide(boolean superuser, Config c) {
    if (!superuser || insecureAllowed(c)) return Future.succeededFuture();
    return Future.failedFuture(new ConfigException("pg.user '" + c.get(Keys.PG_USER) + "' is a PostgreSQL superuser (rolsuper): a node that"
        + " only needs its schema must not be able to read or drop every database. Create a role for it (CREATE ROLE … LOGIN PASSWORD …;"
        + " GRANT CREATE, CONNECT ON DATABASE " + c.get(Keys.PG_DATABASE) + " TO …) and set pg.user and pg.password"
        + " (INSPECT_PG_PASSWORD_FILE), or set " + Keys.SECURITY_ALLOW_INSECURE_CREDENTIALS.name() + "=true for a local test set-up"
        + " (demo.mode allows it too)"));
  }
}
