package dev.inspection.probe;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import dev.inspection.outbox.CheckResult;
import dev.inspection.outbox.OutboxRow;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code POST /ingest/v1/{profile}} on the probe (issue 13 item 2): devices and gateways that push their frames.
 * In order: the token ({@code probe.ingest.tokens}; 401 without a configured one), a JSON content type (415), the body's size
 * ({@code probe.ingest.max.bytes}, 413), reading the frames ({@link PushFrames}: 400 for the body as a whole, a
 * per-frame 400 naming the field), the rate ({@code probe.ingest.rate.per.s}, 429 with Retry-After), then the taken
 * frames go into the probe's group commit ({@link ProbeVerticle#push}) and the answer waits until they are durable
 * in the outbox. One frame: 200 with its {@code seq}, or 400 naming the field. An array: 200 when every frame was
 * taken, 207 with one result per frame when some were refused, 400 when none was taken. 503 with Retry-After when
 * the outbox could not store them: nothing of that push is stored, send it again.
 */
public final class IngestRoutes {
  private static final Logger log = LoggerFactory.getLogger(IngestRoutes.class);
  /** Bodies above this are read off the event loop. */
  private static final int INLINE_PARSE_BYTES = 64 * 1024;

  private final Function<List<CheckResult>, Future<List<OutboxRow>>> outbox;
  private final Metrics metrics;
  private final Clock clock;
  private final int slots;
  private final List<byte[]> tokens;
  private final long maxBytes;
  private final int maxFrames;
  private final IngestRate rate;

  /** @throws ConfigException when a token in {@code probe.ingest.tokens} is weak */
  public IngestRoutes(Config config, Function<List<CheckResult>, Future<List<OutboxRow>>> outbox, Topology topology, Metrics metrics, Clock clock) {
    this.outbox = outbox;
    this.metrics = metrics;
    this.clock = clock;
    this.slots = topology.totalSlots();
    this.tokens = tokens(config.get(Keys.PROBE_INGEST_TOKENS));
    this.maxBytes = config.getLong(Keys.PROBE_INGEST_MAX_BYTES);
    this.maxFrames = config.getInt(Keys.PROBE_INGEST_MAX_FRAMES);
    if (maxBytes < 1024) throw new ConfigException("probe.ingest.max.bytes must be at least 1024, got " + maxBytes);
    if (maxFrames < 1) throw new ConfigException("probe.ingest.max.frames must be at least 1, got " + maxFrames);
    int perSecond = config.getInt(Keys.PROBE_INGEST_RATE_PER_S);
    if (perSecond < 1) throw new ConfigException("probe.ingest.rate.per.s must be at least 1, got " + perSecond);
    this.rate = new IngestRate(perSecond, clock.millis());
  }

  /** The tokens of {@code probe.ingest.tokens}: comma-separated, each at least 16 characters and not one character repeated. */
  static List<byte[]> tokens(String spec) {
    List<byte[]> out = new ArrayList<>();
    if (spec == null || spec.isBlank()) return out;
    for (String t : spec.split(",")) {
      String token = t.trim();
      if (token.length() < 16 || token.chars().distinct().count() < 2) {
        throw new ConfigException("probe.ingest.tokens: every token must be a random secret of at least 16 characters (e.g. `openssl rand -hex 32`),"
            + " separated by commas");
      }
      out.add(token.getBytes(StandardCharsets.UTF_8));
    }
    return out;
  }

  public void mount(Router r) {
    // the body is read only after the token was checked (a body handler may not follow another handler on a route: wrapped)
    BodyHandler bodies = BodyHandler.create(false).setBodyLimit(maxBytes);
    r.post("/ingest/v1/:profile").handler(this::authorize).handler(bodies::handle).handler(this::ingest);
  }

  private void authorize(RoutingContext ctx) {
    if (tokens.isEmpty()) {
      refuse(ctx, 401, "push ingestion is off on this probe: set probe.ingest.tokens (its group's push tokens)");
      return;
    }
    String h = ctx.request().getHeader("Authorization");
    byte[] given = h != null && h.regionMatches(true, 0, "Bearer ", 0, 7) ? h.substring(7).trim().getBytes(StandardCharsets.UTF_8) : null;
    boolean ok = false;
    if (given != null) {
      for (byte[] t : tokens) ok |= MessageDigest.isEqual(t, given); // every token compared: no early exit to time
    }
    if (!ok) {
      ctx.response().putHeader("WWW-Authenticate", "Bearer");
      refuse(ctx, 401, given == null ? "send Authorization: Bearer <this probe group's push token>" : "the push token is not valid for this probe");
      return;
    }
    String type = ctx.request().getHeader("Content-Type");
    if (type != null && !type.toLowerCase(Locale.ROOT).startsWith("application/json")) {
      // a form or multipart body is never decoded: frames are JSON
      refuse(ctx, 415, "send the frames as Content-Type: application/json");
      return;
    }
    ctx.next();
  }

  private void ingest(RoutingContext ctx) {
    String profile = ctx.pathParam("profile");
    String body = ctx.body().asString();
    Instant now = Instant.ofEpochMilli(clock.millis());
    Context here = ctx.vertx().getOrCreateContext();
    Future<PushFrames.Read> read;
    if (body != null && body.length() > INLINE_PARSE_BYTES) {
      read = ctx.vertx().executeBlocking(() -> PushFrames.read(body, profile, now, slots, maxFrames), false);
    } else {
      try {
        read = Future.succeededFuture(PushFrames.read(body == null ? "" : body, profile, now, slots, maxFrames));
      } catch (IllegalArgumentException e) {
        read = Future.failedFuture(e);
      }
    }
    read.onComplete(ar -> here.runOnContext(v -> {
      if (ar.failed()) {
        int status = ar.cause() instanceof IllegalArgumentException && ar.cause().getMessage().startsWith("unknown push profile") ? 404 : 400;
        if (!(ar.cause() instanceof IllegalArgumentException)) {
          ctx.fail(ar.cause());
          return;
        }
        count(profile, "refused", 1);
        refuse(ctx, status, ar.cause().getMessage());
        return;
      }
      take(ctx, profile, ar.result());
    }));
  }

  private void take(RoutingContext ctx, String profile, PushFrames.Read frames) {
    long nowMs = clock.millis();
    if (!rate.tryTake(frames.frames(), nowMs)) {
      count(profile, "rate_limited", frames.frames());
      ctx.response().putHeader("Retry-After", Long.toString(rate.retryAfterSeconds(frames.frames(), nowMs)));
      refuse(ctx, 429, "more than probe.ingest.rate.per.s frames a second: send them again after Retry-After seconds");
      return;
    }
    count(profile, "refused", frames.refused().size());
    Context here = ctx.vertx().getOrCreateContext();
    long start = System.nanoTime();
    Future<List<OutboxRow>> stored = frames.taken().isEmpty() ? Future.succeededFuture(List.of())
        : outbox.apply(frames.taken().stream().map(PushFrames.Taken::result).toList());
    stored.onComplete(ar -> here.runOnContext(v -> {
      if (ar.failed()) {
        log.warn("push of {} frames not stored: {}", frames.taken().size(), ar.cause().getMessage());
        count(profile, "unavailable", frames.taken().size());
        ctx.response().putHeader("Retry-After", "1");
        refuse(ctx, 503, "the frames were not stored (" + ar.cause().getMessage() + "); nothing of this push is kept: send it again");
        return;
      }
      count(profile, "stored", frames.taken().size());
      metrics.registry().timer("ingest_ack_seconds").record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
      answer(ctx, frames, ar.result());
    }));
  }

  private static void answer(RoutingContext ctx, PushFrames.Read frames, List<OutboxRow> rows) {
    JsonArray results = new JsonArray();
    int t = 0;
    int f = 0;
    for (int i = 0; i < frames.frames(); i++) {
      if (t < frames.taken().size() && frames.taken().get(t).index() == i) {
        PushFrames.Taken taken = frames.taken().get(t);
        OutboxRow row = rows.get(t++);
        String id = row.messageId();
        results.add(new JsonObject().put("index", i).put("status", 200).put("device_id", taken.result().deviceId())
            .put("seq", Long.parseLong(id.substring(id.lastIndexOf(':') + 1))).put("message_id", id));
      } else {
        PushFrames.Refused r = frames.refused().get(f++);
        results.add(new JsonObject().put("index", i).put("status", 400).put("field", r.field()).put("error", r.error()));
      }
    }
    int status = frames.refused().isEmpty() ? 200 : frames.taken().isEmpty() ? 400 : 207;
    JsonObject out = frames.single() ? results.getJsonObject(0)
        : new JsonObject().put("status", status).put("taken", frames.taken().size()).put("refused", frames.refused().size()).put("results", results);
    if (frames.single() && status == 400) out.put("error", frames.refused().get(0).error());
    ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json").end(out.encode());
  }

  private void count(String profile, String outcome, int n) {
    if (n > 0) metrics.registry().counter("ingest_frames_total", "profile", PushFrames.PROFILES.contains(profile) ? profile : "unknown", "outcome", outcome)
        .increment(n);
  }

  private static void refuse(RoutingContext ctx, int status, String message) {
    ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json")
        .end(new JsonObject().put("error", message).put("status", status).encode());
  }
}
