package dev.inspection.common;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.concurrent.CancellationException;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * Runs an asynchronous attempt until it succeeds, waiting between failures as a {@link RetryPolicy} says:
 * the one retry loop of the code base (connect, register, migrate, publish the profiles ...).
 *
 * <p>A failure that {@code fatal} accepts ends the retries with that failure (a wrong configuration is not
 * fixed by waiting); {@code stopped} ends them quietly with a {@link CancellationException} (the owner is
 * shutting down). Failures are logged as {@code cannot <what> yet (<cause>); retrying in N ms (attempt n)}
 * on the caller's logger: the first three, then every tenth, so an outage of hours does not flood the log.
 */
public final class Retry {
  private final Vertx vertx;
  private final RetryPolicy policy;
  private final Logger log;

  public Retry(Vertx vertx, RetryPolicy policy, Logger log) {
    this.vertx = vertx;
    this.policy = policy;
    this.log = log;
  }

  /** Retries every failure until {@code attempt} succeeds. */
  public <T> Future<T> until(String what, Supplier<Future<T>> attempt) {
    return until(what, attempt, e -> false, () -> false);
  }

  public <T> Future<T> until(String what, Supplier<Future<T>> attempt, Predicate<Throwable> fatal, BooleanSupplier stopped) {
    Promise<T> done = Promise.promise();
    run(what, attempt, fatal, stopped, policy.backoff(), done);
    return done.future();
  }

  /**
   * Like {@link #until(String, Supplier)}, but waits one backoff delay before the first attempt: for
   * probing something that has just failed (asking again at once would only fail again, or spin).
   */
  public <T> Future<T> afterPause(String what, Supplier<Future<T>> attempt) {
    Promise<T> done = Promise.promise();
    Backoff backoff = policy.backoff();
    vertx.setTimer(backoff.next(), t -> run(what, attempt, e -> false, () -> false, backoff, done));
    return done.future();
  }

  private <T> void run(String what, Supplier<Future<T>> attempt, Predicate<Throwable> fatal, BooleanSupplier stopped, Backoff backoff,
      Promise<T> done) {
    if (stopped.getAsBoolean()) {
      done.tryFail(new CancellationException("stopped before it could " + what));
      return;
    }
    Future<T> f;
    try {
      f = attempt.get();
    } catch (RuntimeException e) {
      f = Future.failedFuture(e);
    }
    f.onComplete(ar -> {
      if (ar.succeeded()) {
        if (backoff.attempts() > 0) log.info("{}: done after {} failed attempt(s)", what, backoff.attempts());
        done.tryComplete(ar.result());
      } else if (fatal.test(ar.cause())) {
        done.tryFail(ar.cause());
      } else if (stopped.getAsBoolean()) {
        done.tryFail(new CancellationException("stopped while trying to " + what));
      } else {
        long delay = backoff.next();
        int n = backoff.attempts();
        if (n <= 3 || n % 10 == 0) {
          log.warn("cannot {} yet ({}); retrying in {} ms (attempt {})", what, describe(ar.cause()), delay, n);
        }
        vertx.setTimer(delay, t -> run(what, attempt, fatal, stopped, backoff, done));
      }
    });
  }

  /** The message of a failure, or its class name when it has none (a bare connection reset says nothing otherwise). */
  public static String describe(Throwable t) {
    if (t == null) return "unknown error";
    Throwable c = t.getCause() != null && t.getMessage() == null ? t.getCause() : t;
    return c.getMessage() != null ? c.getMessage() : c.getClass().getSimpleName();
  }
}
