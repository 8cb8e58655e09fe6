package dev.inspection.worker;

import static dev.inspection.it.TestEnv.awaitResult;

import dev.inspection.it.TestEnv;
import dev.inspection.store.Db;
import dev.inspection.store.Migrations;
import dev.inspection.store.PgOptions;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Map;

/**
 * A test's schema as a node that has run for two months has it: migrated, and the alert events and rollups of the 60
 * days before yesterday in day partitions of their own (the migration makes yesterday .. today + 3; the retention keeps
 * 90 days of both), so a statement that cannot prune partitions shows it.
 */
record AgedSchema(Vertx vertx, Pool pool) implements AutoCloseable {
  static final int PAST_DAYS = 60;

  /** Migrates {@code env}'s schema and adds the past days' partitions; {@link #pool()} has one connection on it. */
  static AgedSchema open(TestEnv env) throws Exception {
    Vertx vertx = Vertx.vertx();
    PgOptions pg = PgOptions.from(env.config(Map.of()));
    Pool pool = Db.pool(vertx, pg, 1);
    awaitResult(Migrations.apply(vertx, pool, pg, env.slots, true));
    LocalDate today = LocalDate.now(ZoneOffset.UTC);
    for (int back = 2; back <= PAST_DAYS + 1; back++) {
      LocalDate d = today.minusDays(back);
      String day = d.toString().replace("-", "");
      long lo = d.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
      env.execute("CREATE TABLE $S.alert_event_" + day + " PARTITION OF $S.alert_event FOR VALUES FROM (" + lo + ") TO (" + (lo + 86_400_000L) + ")");
      env.execute("CREATE TABLE $S.device_status_rollup_1m_" + day + " PARTITION OF $S.device_status_rollup_1m FOR VALUES FROM ('" + d
          + " 00:00:00+00') TO ('" + d.plusDays(1) + " 00:00:00+00')");
    }
    return new AgedSchema(vertx, pool);
  }

  @Override
  public void close() throws Exception {
    awaitResult(pool.close());
    awaitResult(vertx.close());
  }
}
