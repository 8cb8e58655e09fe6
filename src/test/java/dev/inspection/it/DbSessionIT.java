package dev.inspection.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.inspection.store.Db;
import dev.inspection.store.PgOptions;
import dev.inspection.worker.DbErrors;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.DatabaseException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A pool's sessions in PostgreSQL (issue 11): named after the role and the pool, so an operator and the bench tell the
 * commit pool from the others; each connection keeps its prepared statements (parsed once), planned for the values of
 * each execution; a cached statement still runs after its table changed under it (a migration by another node), and
 * after a change of its result type it fails once and then runs again.
 */
class DbSessionIT {
  private static final String READ = "SELECT v FROM session_probe WHERE k = $1";

  @Test
  void aPoolsSessionsAreNamedKeepTheirStatementsAndSurviveATableChange() throws Exception {
    try (TestEnv env = new TestEnv(4)) {
      env.execute("CREATE SCHEMA IF NOT EXISTS $S");
      env.execute("CREATE TABLE $S.session_probe (k int PRIMARY KEY, v text)");
      env.execute("INSERT INTO $S.session_probe VALUES (1, 'one'), (2, 'two')");
      Vertx vertx = Vertx.vertx();
      PgOptions pg = PgOptions.from(env.config(Map.of("role", "worker")));
      Pool pool = Db.pool(vertx, pg, 1, "pg-worker");
      try {
        SqlConnection conn = pool.getConnection().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        try {
          Row session = get(conn, "SELECT current_setting('application_name'), current_setting('plan_cache_mode')", Tuple.tuple());
          assertEquals("inspection-worker/pg-worker", session.getString(0), "the session names its role and its pool");
          assertEquals("force_custom_plan", session.getString(1), "each execution is planned for its own values");

          for (int i = 0; i < 8; i++) get(conn, READ, Tuple.of(1 + i % 2)); // auto mode would switch to a generic plan from the sixth
          Row prepared = get(conn, "SELECT count(*), coalesce(sum(custom_plans), 0), coalesce(sum(generic_plans), 0) FROM pg_prepared_statements"
              + " WHERE statement = $1", Tuple.of(READ));
          assertEquals(1L, prepared.getLong(0), "the statement is prepared once on the connection, not per execution");
          assertEquals(8L, prepared.getLong(1), "every execution got a custom plan");
          assertEquals(0L, prepared.getLong(2), "never a generic one");

          env.execute("ALTER TABLE $S.session_probe ADD COLUMN extra int");
          assertEquals("two", get(conn, READ, Tuple.of(2)).getString(0), "PostgreSQL plans the cached statement again after the table changed");
          // a column's type changed under the statement's result: PostgreSQL refuses the cached statement once (0A000,
          // an OUTAGE for the worker: requeue and try again), the client drops it, and the next execution prepares it anew
          env.execute("ALTER TABLE $S.session_probe ALTER COLUMN v TYPE varchar(20)");
          ExecutionException refused = assertThrows(ExecutionException.class, () -> get(conn, READ, Tuple.of(1)));
          assertEquals("0A000", ((DatabaseException) refused.getCause()).getSqlState(), refused.getCause().getMessage());
          assertEquals(DbErrors.Kind.OUTAGE, DbErrors.of(refused).kind(), "the batch is requeued, not dead-lettered");
          assertEquals("one", get(conn, READ, Tuple.of(1)).getString(0), "the next execution prepares the statement again");
        } finally {
          conn.close();
        }
      } finally {
        pool.close();
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      }
    }
  }

  private static Row get(SqlConnection conn, String sql, Tuple args) throws Exception {
    return conn.preparedQuery(sql).execute(args).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS).iterator().next();
  }
}
