package dev.inspection.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.common.ApiError;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The API's commands run on the scheduler's context, answer on the caller's, and a follower refuses them all. */
class OperationsTest {
  private final Vertx vertx = Vertx.vertx();
  private final Context scheduler = vertx.getOrCreateContext();
  private final Context http = vertx.getOrCreateContext();

  /** A leader whose commands record the context they ran on. */
  private static final class FakeLeader implements Operations.Leader {
    final AtomicReference<Context> ranOn = new AtomicReference<>();
    boolean leads = true;
    RuntimeException throwing;

    @Override
    public Future<Void> requireLeader() {
      return leads ? Future.succeededFuture() : Future.failedFuture(new ApiError(409, "this scheduler is a follower"));
    }

    @Override
    public Future<JsonObject> drain(String workerId) {
      ranOn.set(Vertx.currentContext());
      if (throwing != null) throw throwing;
      return Future.succeededFuture(new JsonObject().put("worker_id", workerId).put("state", "DRAINING"));
    }

    @Override
    public Future<JsonObject> quarantine(String workerId) {
      ranOn.set(Vertx.currentContext());
      return Future.succeededFuture(new JsonObject().put("worker_id", workerId).put("state", "DEAD"));
    }
  }

  @AfterEach
  void closeVertx() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** A command's outcome and the context its answer arrived on. */
  private record Answer<T>(AsyncResult<T> result, Context on) {}

  /** Calls {@code command} on the HTTP context and waits for its answer. */
  private <T> Answer<T> fromHttp(Function<Operations, Future<T>> command, Operations ops) throws Exception {
    CompletableFuture<Answer<T>> done = new CompletableFuture<>();
    http.runOnContext(v -> command.apply(ops).onComplete(ar -> done.complete(new Answer<>(ar, Vertx.currentContext()))));
    return done.get(10, TimeUnit.SECONDS);
  }

  @Test
  void drainAndQuarantineRunOnTheSchedulersContextAndAnswerOnTheCallers() throws Exception {
    FakeLeader leader = new FakeLeader();
    Operations ops = new Operations(scheduler, leader, null, null, null, new Jobs(), null);
    for (Function<Operations, Future<JsonObject>> command : List.<Function<Operations, Future<JsonObject>>>of(o -> o.drain("w1"), o -> o.quarantine("w1"))) {
      leader.ranOn.set(null);
      Answer<JsonObject> answer = fromHttp(command, ops);
      assertSame(scheduler, leader.ranOn.get());
      assertSame(http, answer.on());
      assertEquals("w1", answer.result().result().getString("worker_id"));
    }
  }

  @Test
  void aCommandThatThrowsFailsItsFutureInsteadOfTheEventLoop() throws Exception {
    FakeLeader leader = new FakeLeader();
    leader.throwing = new IllegalStateException("store not ready");
    Operations ops = new Operations(scheduler, leader, null, null, null, new Jobs(), null);
    assertSame(leader.throwing, fromHttp(o -> o.drain("w1"), ops).result().cause());
  }

  @Test
  void aCallFromOutsideVertxStillAnswers() throws Exception {
    FakeLeader leader = new FakeLeader();
    Operations ops = new Operations(scheduler, leader, null, null, null, new Jobs(), null);
    JsonObject w = ops.quarantine("w2").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals("DEAD", w.getString("state"));
    assertSame(scheduler, leader.ranOn.get());
  }

  @Test
  void aFollowerRefusesEveryMutationBeforeTouchingTheStores() throws Exception {
    FakeLeader leader = new FakeLeader();
    leader.leads = false;
    Jobs jobs = new Jobs();
    // null stores: a command that reached them would fail with a NullPointerException, not the 409
    Operations ops = new Operations(scheduler, leader, null, null, null, jobs, null);
    List<Function<Operations, Future<?>>> commands = List.of(
        o -> o.requireLeader(),
        o -> o.importDevices(List.of()),
        o -> o.startImport(List.of(), 0),
        o -> o.updateDevice("d1", new JsonObject().put("priority", 1)),
        o -> o.ackAlert("d1", "device.offline", "api-token", null),
        o -> o.replayDeadLetters(null, "api-token"),
        o -> o.discardDeadLetters(new Long[] {1L}, "api-token"));
    for (Function<Operations, Future<?>> command : commands) {
      Throwable refused = fromHttp(o -> command.apply(o).map(x -> (Object) x), ops).result().cause();
      assertTrue(refused instanceof ApiError a && a.status == 409, String.valueOf(refused));
    }
    assertNull(jobs.get(1), "no job was started");
  }

  @Test
  void anImportJobWithNothingToImportIsDoneAtOnce() throws Exception {
    Jobs jobs = new Jobs();
    Operations ops = new Operations(scheduler, new FakeLeader(), null, null, null, jobs, null);
    Jobs.Job job = ops.startImport(List.of(), 2).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals("DONE", job.toJson().getString("state"));
    assertEquals("imported 0 device(s); rejected 2", job.toJson().getString("message"));
  }
}
