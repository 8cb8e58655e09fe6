package dev.inspection.probe;

import dev.inspection.metrics.Metrics;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The push simulator ({@code probe.sim.push.rooms}, issue 13 item 5): simulated hotel RCUs ({@link SimRooms}) push
 * their frames to this probe's own {@code POST /ingest/v1/hotel_room} over HTTP with a push token, as a gateway
 * would — so the demo shows hotel rooms, and the frames go the whole real way (token, validation, outbox, broker,
 * worker, merge, device-time guard). One push in flight at a time: a round that comes while one waits is skipped.
 * A push refused whole with 429 or 503, or lost on the way, is sent again before the next round; a frame refused
 * alone (400, the malformed ones) is counted, never sent again.
 */
public final class PushSimulator extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(PushSimulator.class);

  /** Where and how to push: the probe's own endpoint. */
  public record Target(String scheme, String host, int port, String token) {}

  private final SimRooms rooms;
  private final Target target;
  private final long intervalMs;
  private final Clock clock;
  private final Metrics metrics;
  private final List<SimRooms.Frame> retry = new ArrayList<>();
  private final AtomicLong taken = new AtomicLong();
  private final AtomicLong refused = new AtomicLong();
  private final AtomicLong unexpected = new AtomicLong();
  private WebClient web;
  private long timer = -1;
  private boolean pushing;
  private boolean settling;

  public PushSimulator(int rooms, long intervalMs, Target target, Clock clock, Metrics metrics, Random random) {
    this.rooms = new SimRooms(rooms, random);
    this.intervalMs = intervalMs;
    this.target = target;
    this.clock = clock;
    this.metrics = metrics;
  }

  public SimRooms rooms() {
    return rooms;
  }

  /** Frames the probe took (200), refused alone as malformed (400), and answers that did not match what was sent. */
  public long taken() {
    return taken.get();
  }

  public long refused() {
    return refused.get();
  }

  public long unexpected() {
    return unexpected.get();
  }

  @Override
  public Future<?> start() {
    WebClientOptions o = new WebClientOptions().setDefaultHost(target.host()).setDefaultPort(target.port());
    // the probe's own certificate, reached by loopback address: no name to verify it against
    if (target.scheme().equals("https")) o.setSsl(true).setTrustAll(true).setVerifyHost(false);
    web = WebClient.create(vertx, o);
    timer = vertx.setPeriodic(intervalMs, intervalMs, t -> {
      if (!pushing && !settling) {
        List<SimRooms.Frame> frames = new ArrayList<>(retry);
        retry.clear();
        frames.addAll(rooms.round(clock.millis()));
        push(frames);
      }
    });
    log.info("push simulator: {} hotel rooms of '{}' push to {}://{}:{}/ingest/v1/hotel_room every {} ms", rooms.devices().size(), SimRooms.HOTEL,
        target.scheme(), target.host(), target.port(), intervalMs);
    return Future.succeededFuture();
  }

  /**
   * Stops the rounds and ends the run ({@link SimRooms#settle}): every RCU's final report, then stale copies of earlier
   * frames. Completes when both pushes were answered; afterwards each room's merged status must be its final report.
   */
  public Future<Void> settle() {
    Promise<Void> done = Promise.promise();
    context.runOnContext(v -> {
      settling = true;
      vertx.cancelTimer(timer);
      awaitIdle().compose(x -> {
        List<List<SimRooms.Frame>> end = rooms.settle(clock.millis());
        List<SimRooms.Frame> first = new ArrayList<>(retry);
        retry.clear();
        first.addAll(end.get(0));
        return pushUntilTaken(first).compose(y -> pushUntilTaken(end.get(1)));
      }).onComplete(done);
    });
    return done.future();
  }

  private Future<Void> awaitIdle() {
    if (!pushing) return Future.succeededFuture();
    Promise<Void> p = Promise.promise();
    vertx.setPeriodic(20, t -> {
      if (!pushing) {
        vertx.cancelTimer(t);
        p.complete();
      }
    });
    return p.future();
  }

  private Future<Void> pushUntilTaken(List<SimRooms.Frame> frames) {
    if (frames.isEmpty()) return Future.succeededFuture();
    return push(frames).compose(v -> {
      List<SimRooms.Frame> again = new ArrayList<>(retry);
      retry.clear();
      if (again.isEmpty()) return Future.succeededFuture();
      Promise<Void> later = Promise.promise();
      vertx.setTimer(200, t -> pushUntilTaken(again).onComplete(later));
      return later.future();
    });
  }

  private Future<Void> push(List<SimRooms.Frame> frames) {
    if (frames.isEmpty()) return Future.succeededFuture();
    pushing = true;
    JsonArray body = new JsonArray();
    frames.forEach(f -> body.add(f.body()));
    return web.post("/ingest/v1/hotel_room").putHeader("Authorization", "Bearer " + target.token()).putHeader("Content-Type", "application/json")
        .sendBuffer(body.toBuffer())
        .transform(ar -> {
          pushing = false;
          if (ar.succeeded()) {
            answered(frames, ar.result());
          } else {
            log.debug("push simulator: push of {} frames failed ({}); sent again", frames.size(), ar.cause().getMessage());
            retry.addAll(frames);
          }
          return Future.<Void>succeededFuture();
        });
  }

  private void answered(List<SimRooms.Frame> frames, HttpResponse<Buffer> r) {
    int status = r.statusCode();
    if (status == 429 || status == 503) {
      retry.addAll(frames);
      count("retried", frames.size());
      return;
    }
    if (status != 200 && status != 207 && status != 400) {
      log.warn("push simulator: the probe answered {} to a push of {} frames: {}", status, frames.size(), r.bodyAsString());
      count("failed", frames.size());
      return;
    }
    JsonArray results = status == 400 && !r.bodyAsString().contains("\"results\"") ? null : r.bodyAsJsonObject().getJsonArray("results");
    int ok = 0;
    for (int i = 0; i < frames.size(); i++) {
      int got = results == null ? 400 : results.getJsonObject(i).getInteger("status");
      boolean valid = frames.get(i).valid();
      if (got == 200) ok++;
      if ((got == 200) != valid) {
        unexpected.incrementAndGet();
        log.warn("push simulator: frame {} of a push answered {} although it is {}: {}", i, got, valid ? "valid" : "malformed",
            results == null ? r.bodyAsString() : results.getJsonObject(i).encode());
      }
    }
    taken.addAndGet(ok);
    refused.addAndGet(frames.size() - ok);
    count("taken", ok);
    count("refused", frames.size() - ok);
  }

  private void count(String outcome, int n) {
    if (n > 0) metrics.registry().counter("sim_push_frames_total", "outcome", outcome).increment(n);
  }

  @Override
  public Future<?> stop() {
    if (timer >= 0) vertx.cancelTimer(timer);
    if (web != null) web.close();
    return Future.succeededFuture();
  }

  /** For logs and tests. */
  public JsonObject stats() {
    return new JsonObject().put("taken", taken.get()).put("refused", refused.get()).put("unexpected", unexpected.get());
  }
}
