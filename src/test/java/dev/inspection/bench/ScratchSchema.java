package dev.inspection.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.concurrent.TimeUnit;

/** The end of a benchmark's scratch schema: dropped (kept with {@code BENCH_KEEP_SCHEMA}), then its pool and Vert.x (unless null) closed. */
final class ScratchSchema {
  private ScratchSchema() {}

  static void close(String bench, String schema, Pool pool, Vertx vertx) {
    try {
      if (System.getenv("BENCH_KEEP_SCHEMA") != null) System.out.println("schema " + schema + " kept (BENCH_KEEP_SCHEMA)");
      else await(pool.query("DROP SCHEMA IF EXISTS " + schema + " CASCADE").execute());
    } catch (Exception e) {
      System.err.println(bench + ": could not drop schema " + schema + ": " + e.getMessage());
    }
    pool.close();
    if (vertx != null) vertx.close(); // null: the caller closes its Vert.x after its other schemas
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(5, TimeUnit.MINUTES);
  }
}
