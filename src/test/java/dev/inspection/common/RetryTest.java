package dev.inspection.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class RetryTest {
  private Vertx vertx;
  private Retry retry;

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
    retry = new Retry(vertx, new RetryPolicy(1, 4), LoggerFactory.getLogger(RetryTest.class));
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static Throwable failureOf(Future<?> f) throws Exception {
    try {
      await(f);
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (CancellationException e) {
      return e; // CompletableFuture.get() throws a cancellation as itself
    }
    throw new AssertionError("expected a failure");
  }

  @Test
  void failuresAreRetriedUntilTheAttemptSucceeds() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    String result = await(retry.until("answer", () -> calls.incrementAndGet() < 4
        ? Future.failedFuture(new IllegalStateException("not yet")) : Future.succeededFuture("ok")));
    assertEquals("ok", result);
    assertEquals(4, calls.get());
  }

  @Test
  void aFatalFailureEndsTheRetriesWithThatFailure() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    IllegalArgumentException wrong = new IllegalArgumentException("wrong configuration");
    Throwable t = failureOf(retry.until("migrate", () -> {
      calls.incrementAndGet();
      return Future.failedFuture(wrong);
    }, e -> e instanceof IllegalArgumentException, () -> false));
    assertEquals(wrong, t);
    assertEquals(1, calls.get());
  }

  @Test
  void anAttemptThatThrowsCountsAsAFailedAttempt() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    assertEquals(2, await(retry.until("count", () -> {
      if (calls.incrementAndGet() == 1) throw new IllegalStateException("boom");
      return Future.succeededFuture(calls.get());
    })));
  }

  @Test
  void stoppingTheOwnerCancelsTheRetries() throws Exception {
    AtomicBoolean stopped = new AtomicBoolean();
    AtomicInteger calls = new AtomicInteger();
    Future<Object> f = retry.until("connect", () -> {
      if (calls.incrementAndGet() == 3) stopped.set(true);
      return Future.failedFuture(new IllegalStateException("down"));
    }, e -> false, stopped::get);
    assertInstanceOf(CancellationException.class, failureOf(f));
    assertEquals(3, calls.get());
  }

  @Test
  void afterPauseWaitsBeforeTheFirstAttempt() throws Exception {
    Retry slow = new Retry(vertx, new RetryPolicy(200, 400), LoggerFactory.getLogger(RetryTest.class));
    long start = System.nanoTime();
    AtomicInteger calls = new AtomicInteger();
    await(slow.afterPause("probe", () -> Future.succeededFuture(calls.incrementAndGet())));
    long waitedMs = (System.nanoTime() - start) / 1_000_000;
    // the first delay is uniform in [initial/2, initial]
    assertTrue(waitedMs >= 100, "waited " + waitedMs + " ms");
    assertEquals(1, calls.get());
  }
}
