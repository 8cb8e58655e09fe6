package dev.inspection.outbox;

import dev.inspection.messaging.Priority;
import dev.inspection.messaging.Topology;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/** What the tests of the SQLite outbox on a real file share: a directory, a Vert.x instance for the test, a topology of 8 slots. */
abstract class OutboxFileTest {
  @TempDir Path dir;
  Vertx vertx;
  final Topology topology = new Topology("t", 8, 1_000_000, 20);

  @BeforeEach
  void up() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void down() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** n results checked at {@code atMs}, one device each, normal priority, about 500 bytes of payload. */
  static List<CheckResult> normal(int n, long atMs) {
    List<CheckResult> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(new CheckResult("dev-" + i, 1, Priority.NORMAL, Instant.ofEpochMilli(atMs), 0, 1, 1, new JsonObject().put("pad", "x".repeat(500)), 2));
    }
    return out;
  }

  static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
