package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.inspection.store.Db;
import dev.inspection.store.PgOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Issue 15 item 4: PostgreSQL ending a connection inside a transaction (here pg_terminate_backend: FATAL 57P01)
 * is a log line with its header, not a stack trace the SQL client prints bare on stderr.
 */
class DbConnectionFailureIT {
  @Test
  void aConnectionTerminatedInsideATransactionIsLoggedNotPrintedBare() throws Exception {
    Logger dbLog = (Logger) LoggerFactory.getLogger(Db.class);
    ListAppender<ILoggingEvent> seen = new ListAppender<>();
    seen.start();
    dbLog.addAppender(seen);
    PrintStream stderr = System.err;
    ByteArrayOutputStream copy = new ByteArrayOutputStream();
    System.setErr(new PrintStream(new Tee(stderr, copy), true, StandardCharsets.UTF_8));
    try (TestEnv env = new TestEnv(4)) {
      Vertx vertx = Vertx.vertx();
      Pool pool = Db.pool(vertx, PgOptions.from(env.config(Map.of())), 2);
      try {
        Promise<Void> hold = Promise.promise();
        Future<Void> tx = Db.inTransaction(pool, conn -> conn.query("SELECT pg_backend_pid()").execute()
            .compose(rs -> pool.preparedQuery("SELECT pg_terminate_backend($1)").execute(Tuple.of(rs.iterator().next().getInteger(0))))
            .compose(terminated -> hold.future()));
        awaitTrue(Duration.ofSeconds(30), "the terminated connection's failure is logged",
            () -> List.copyOf(seen.list).stream().anyMatch(e -> e.getFormattedMessage().contains("57P01")));
        hold.complete();
        awaitTrue(Duration.ofSeconds(30), "the transaction ends", tx::isComplete);
        assertTrue(tx.failed(), "the transaction cannot commit on a terminated connection");
        assertFalse(copy.toString(StandardCharsets.UTF_8).contains("57P01"), "nothing printed bare: " + copy.toString(StandardCharsets.UTF_8));
      } finally {
        pool.close();
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      }
    } finally {
      System.setErr(stderr);
      dbLog.detachAppender(seen);
    }
  }

  /** Writes to the real stderr and keeps a copy. */
  private static final class Tee extends OutputStream {
    private final OutputStream a;
    private final OutputStream b;

    Tee(OutputStream a, OutputStream b) {
      this.a = a;
      this.b = b;
    }

    @Override
    public synchronized void write(int c) throws java.io.IOException {
      a.write(c);
      b.write(c);
    }

    @Override
    public synchronized void write(byte[] buf, int off, int len) throws java.io.IOException {
      a.write(buf, off, len);
      b.write(buf, off, len);
    }
  }
}
