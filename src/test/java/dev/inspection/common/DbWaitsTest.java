package dev.inspection.common;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.VertxException;
import io.vertx.pgclient.PgException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class DbWaitsTest {

  @Test
  void aLockTimeoutIsFoundAmongTheCausesAndNoOtherStateIsOne() {
    PgException lock = new PgException("canceling statement due to lock timeout", "ERROR", "55P03", null);
    assertTrue(DbWaits.isLockTimeout(lock));
    assertTrue(DbWaits.isLockTimeout(new CompletionException(new RuntimeException(lock))), "wrapped, as a future's failure may be");
    assertFalse(DbWaits.isLockTimeout(new PgException("canceling statement due to statement timeout", "ERROR", "57014", null)));
    assertFalse(DbWaits.isLockTimeout(new PgException("deadlock detected", "ERROR", "40P01", null)));
    assertFalse(DbWaits.isLockTimeout(new VertxException(DbWaits.POOL_TIMEOUT)));
    assertFalse(DbWaits.isLockTimeout(null));
  }

  @Test
  void aPoolTimeoutIsTheClientsOwnMessageAndNothingElse() {
    assertTrue(DbWaits.isPoolTimeout(new VertxException("Timeout waiting for connection")));
    assertFalse(DbWaits.isPoolTimeout(new VertxException("Connection pool reached max wait queue size of 10000")));
    assertFalse(DbWaits.isPoolTimeout(new PgException("canceling statement due to lock timeout", "ERROR", "55P03", null)));
    assertFalse(DbWaits.isPoolTimeout(new IllegalStateException("Timeout waiting for connection")), "only the client's exception type");
    assertFalse(DbWaits.isPoolTimeout(null));
  }
}
