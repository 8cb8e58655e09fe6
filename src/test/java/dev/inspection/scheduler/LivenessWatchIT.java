package dev.inspection.scheduler;

import static dev.inspection.it.TestEnv.awaitResult;
import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.control.Liveness;
import dev.inspection.it.TestEnv;
import dev.inspection.store.Db;
import dev.inspection.store.PgOptions;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The leader's liveness watch against a real PostgreSQL: it waits on a live worker's lock without holding the
 * database's xmin horizon (a waiting statement holds a snapshot; one wait for a worker's whole life kept vacuum from
 * removing anything that died after it began), and it still hears the worker's session end.
 */
class LivenessWatchIT {
  private static final String WATCHERS = "SELECT backend_xmin::text FROM pg_stat_activity WHERE application_name = 'inspection-leader-liveness-watch'"
      + " AND wait_event = 'advisory'";

  @Test
  void theWatchLetsTheXminHorizonMoveOnWhileTheWorkerLivesAndHearsItsSessionEnd() throws Exception {
    try (TestEnv env = new TestEnv(1)) {
      Vertx vertx = Vertx.vertx();
      try {
        PgConnectOptions options = Db.connectOptions(PgOptions.from(env.config(Map.of())));
        // the worker's liveness session: holds its lock as LivenessSession does
        PgConnection worker = awaitResult(PgConnection.connect(vertx, options));
        awaitResult(worker.preparedQuery("SELECT pg_advisory_lock(hashtext($1), hashtext($2))").execute(Tuple.of(Liveness.namespace(env.name), "w1")));
        AtomicInteger freed = new AtomicInteger();
        LivenessWatch watch = new LivenessWatch(vertx, options, env.name, freed::incrementAndGet, System::currentTimeMillis);
        vertx.runOnContext(v -> watch.follow(List.of("w1")));
        awaitTrue(Duration.ofSeconds(10), "the watch waits on w1's lock", () -> !env.query(WATCHERS).isEmpty());

        // transactions go on elsewhere; the waiting session's snapshot must follow them within a wait round or two
        long before = env.queryLong("SELECT txid_current()");
        awaitTrue(Duration.ofMillis(3 * LivenessWatch.WAIT_ROUND_MS + 5_000), "the watch's xmin passes transaction " + before, () -> {
          List<Object[]> rows = env.query(WATCHERS);
          return rows.size() == 1 && rows.get(0)[0] != null && Long.parseLong((String) rows.get(0)[0]) > before;
        }, () -> "xmin of the waiting watch: " + env.query(WATCHERS).stream().map(r -> String.valueOf(r[0])).toList());
        assertEquals(0, freed.get(), "a wait that ran out while the worker lives frees nothing");

        // the worker's process ends: its session closes and the watch says so at once
        long closed = System.nanoTime();
        awaitResult(worker.close());
        awaitTrue(Duration.ofSeconds(10), "the watch hears w1's lock come free", () -> freed.get() == 1);
        long heardMs = (System.nanoTime() - closed) / 1_000_000;
        assertTrue(heardMs < LivenessWatch.WAIT_ROUND_MS + 2_000, "heard " + heardMs + " ms after the session closed");
        vertx.runOnContext(v -> watch.release());
      } finally {
        awaitResult(vertx.close());
      }
    }
  }
}
