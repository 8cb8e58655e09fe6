package dev.inspection.scheduler;

import dev.inspection.inventory.Device;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.function.Supplier;

/**
 * Everything the API may change, run on the scheduler verticle's own context. Leadership, the control
 * loop and the leader's fenced writes are the scheduler's state: a fenced write that finds a newer term
 * steps down ({@code Leadership.lost}, {@code ControlLoop.deposed}) on the thread it completes on, so it
 * must be the scheduler's. Each command first checks that this node leads (a follower answers 409 with
 * the leader's address) and completes back on the caller's context.
 */
public final class Operations {
  /** Rows per transaction of an import run as a job. */
  static final int IMPORT_CHUNK = 5000;

  /** The leader's own commands, kept by the scheduler verticle next to the leadership they depend on. */
  public interface Leader {
    /** Succeeds while this node leads; fails with a 409 naming the leader otherwise. */
    Future<Void> requireLeader();

    Future<JsonObject> drain(String workerId);

    Future<JsonObject> quarantine(String workerId);
  }

  private final Context context;
  private final Leader leader;
  private final DeviceStore devices;
  private final StateView state;
  private final DeadLetterDesk deadLetters;
  private final Jobs jobs;
  private final SlotMaps slotMaps;

  Operations(Context context, Leader leader, DeviceStore devices, StateView state, DeadLetterDesk deadLetters, Jobs jobs, SlotMaps slotMaps) {
    this.context = context;
    this.leader = leader;
    this.devices = devices;
    this.state = state;
    this.deadLetters = deadLetters;
    this.jobs = jobs;
    this.slotMaps = slotMaps;
  }

  public Future<Void> requireLeader() {
    return onScheduler(leader::requireLeader);
  }

  /** Starts a drain (D6): the worker becomes DRAINING and the leader moves its slots out in batches. */
  public Future<JsonObject> drain(String workerId) {
    return onScheduler(() -> leader.drain(workerId));
  }

  /** Declares a live worker DEAD at once (its slots move with an epoch bump). */
  public Future<JsonObject> quarantine(String workerId) {
    return onScheduler(() -> leader.quarantine(workerId));
  }

  /** Upserts the devices in one transaction; completes with the new resource version. */
  public Future<Long> importDevices(List<Device> parsed) {
    return onLeader(() -> devices.importDevices(parsed));
  }

  /**
   * A large import as a job: answers at once with the job, whose progress {@code GET /api/v1/jobs/{id}}
   * reports, and upserts in chunks of {@value #IMPORT_CHUNK}, each its own transaction.
   */
  public Future<Jobs.Job> startImport(List<Device> parsed, int rejected) {
    return onLeader(() -> {
      Jobs.Job job = jobs.start("device import", parsed.size());
      importChunks(parsed, 0, job, rejected);
      return Future.succeededFuture(job);
    });
  }

  private void importChunks(List<Device> all, int from, Jobs.Job job, int rejected) {
    if (from >= all.size()) {
      job.done("imported " + all.size() + " device(s); rejected " + rejected);
      return;
    }
    List<Device> chunk = all.subList(from, Math.min(all.size(), from + IMPORT_CHUNK));
    devices.importDevices(chunk).onSuccess(v -> {
      job.advance(chunk.size());
      importChunks(all, from + chunk.size(), job, rejected);
    }).onFailure(e -> job.fail("stopped after " + from + " of " + all.size() + ": " + e.getMessage() + " (import again: it is an upsert)"));
  }

  /** Changes inventory fields of one device; null when it is not in the inventory (see {@link DeviceStore#update}). */
  public Future<Long> updateDevice(String id, JsonObject patch) {
    return onLeader(() -> devices.update(id, patch));
  }

  /** Acknowledges an alert's active period; null when the device has no such alert. */
  public Future<JsonObject> ackAlert(String device, String key, String by, String note) {
    return onLeader(() -> state.ack(device, key, by, note));
  }

  /** Replays pending dead letters (every pending one when {@code ids} is null) as a job. */
  public Future<Jobs.Job> replayDeadLetters(Long[] ids, String by) {
    return onLeader(() -> deadLetters.replay(ids, by));
  }

  public Future<Integer> discardDeadLetters(Long[] ids, String by) {
    return onLeader(() -> deadLetters.discard(ids, by));
  }

  /** Schedules a reshard to {@code slots} (D11): the new map version with its effective time and grace window. */
  public Future<JsonObject> reshard(int slots) {
    return onLeader(() -> slotMaps.schedule(slots));
  }

  private <T> Future<T> onLeader(Supplier<Future<T>> work) {
    return onScheduler(() -> leader.requireLeader().compose(v -> work.get()));
  }

  /**
   * Runs {@code work} on the scheduler's context and completes on the caller's (the HTTP verticle
   * answers its request on its own event loop). A command that throws fails its future.
   */
  private <T> Future<T> onScheduler(Supplier<Future<T>> work) {
    Context caller = Vertx.currentContext();
    if (caller == context) return start(work);
    Promise<T> answer = Promise.promise();
    context.runOnContext(v -> start(work).onComplete(ar -> {
      if (caller == null) answer.handle(ar);
      else caller.runOnContext(x -> answer.handle(ar));
    }));
    return answer.future();
  }

  private static <T> Future<T> start(Supplier<Future<T>> work) {
    try {
      return work.get();
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
  }
}
