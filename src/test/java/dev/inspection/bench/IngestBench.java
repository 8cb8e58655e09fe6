package dev.inspection.bench;

import dev.inspection.config.Config;
import dev.inspection.node.Node;
import dev.inspection.node.Teardown;
import dev.inspection.outbox.CheckResult;
import dev.inspection.probe.PushFrames;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Push ingestion on one probe (issue 13 "Done means"): frames/s acknowledged durable and the ack latency of a push,
 * through {@code POST /ingest/v1/hotel_room} over HTTP, against a baseline measured in the same run on the same
 * probe: the same frames handed straight to the probe's group commit ({@code ProbeVerticle#push}), without HTTP,
 * token, JSON parsing or validation. Each phase: {@code --clients} loops, each sending a push of {@code --frames}
 * frames and the next one when it is answered, a warm-up of 3 s, then {@code --seconds} measured. The probe
 * publishes to RabbitMQ under its own prefix (no worker); its queues are deleted at the end. Test code, run by
 * {@code ./run.sh bench --ingest} (flags through BENCH_INGEST_ARGS).
 */
public final class IngestBench {
  private static final String TOKEN = "bench-ingest-token-" + UUID.randomUUID().toString().replace("-", "");

  public static void main(String[] args) throws Exception {
    Map<String, Integer> o = new HashMap<>(Map.of("seconds", 20, "clients", 8, "frames", 100, "devices", 2000, "rounds", 4));
    for (int i = 0; i + 1 < args.length; i += 2) {
      String k = args[i].replaceFirst("^--", "");
      if (!o.containsKey(k)) throw new IllegalArgumentException("unknown flag " + args[i] + "; flags: " + o.keySet());
      o.put(k, Integer.parseInt(args[i + 1]));
    }
    String prefix = "bench_ingest_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    Map<String, String> flags = new HashMap<>(Map.of("role", "probe", "node.id", prefix, "data.dir", Path.of("target", "bench", prefix).toString(),
        "topology.prefix", prefix, "redis.channel.prefix", prefix, "pg.schema", prefix, "slots.total", "16", "http.port", "0",
        "probe.ingest.tokens", TOKEN, "security.allow.insecure.credentials", "true"));
    flags.put("probe.ingest.rate.per.s", "1000000");
    Node node = new Node(Config.of(flags), Clock.systemUTC());
    Vertx clients = Vertx.vertx();
    try {
      node.start().toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
      int port = node.httpPort();
      WebClient web = WebClient.create(clients, new WebClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(port),
          new io.vertx.core.http.PoolOptions().setHttp1MaxSize(o.get("clients")));
      long[] counter = {0};
      Supplier<JsonArray> body = () -> {
        JsonArray a = new JsonArray();
        for (int f = 0; f < o.get("frames"); f++) {
          long n = counter[0]++;
          String device = "bench-rcu-" + (n % o.get("devices"));
          a.add(new JsonObject().put("frame", "0x36").put("hotel_id", "bench").put("room_id", Long.toString(n % o.get("devices"))).put("device_id", device)
              .put("guid", "b-" + n).put("ts_ms", 1_780_000_000_000L + n).put("sys_lock_status", (int) (n % 2))
              .put("device_list", new JsonArray().add(new JsonObject().put("dev_type", 1).put("dev_addr", 1).put("dev_loop", 1).put("type_l", (int) (n % 2)).put("type_h", 50)))
              .put("fault_list", new JsonArray()));
        }
        return a;
      };
      Push direct = () -> {
        List<CheckResult> rs = PushFrames.read(body.get().encode(), "hotel_room", Instant.now(), 16, 1000).taken().stream().map(PushFrames.Taken::result).toList();
        return node.probe().push(rs).map(rows -> rows.size());
      };
      Push http = () -> web.post("/ingest/v1/hotel_room").putHeader("Authorization", "Bearer " + TOKEN).putHeader("Content-Type", "application/json")
          .sendBuffer(body.get().toBuffer()).map(r -> {
            if (r.statusCode() != 200) throw new IllegalStateException("push answered " + r.statusCode() + ": " + r.bodyAsString());
            return r.bodyAsJsonObject().getInteger("taken");
          });
      double load0 = load();
      // interleaved rounds, so that what the shared machine does meanwhile hits both alike
      Sample base = new Sample();
      Sample ingest = new Sample();
      int rounds = o.get("rounds");
      int each = Math.max(1, o.get("seconds") / rounds);
      run(clients, direct, o.get("clients"), 3, null); // warm-up of both paths
      run(clients, http, o.get("clients"), 3, null);
      for (int r = 0; r < rounds; r++) {
        run(clients, direct, o.get("clients"), each, base);
        run(clients, http, o.get("clients"), each, ingest);
      }
      double load1 = load();
      System.out.printf("ingest bench: %d clients x %d frames a push, %d rounds of %d s per path (interleaved) after 3 s warm-up each, %d devices;"
          + " load average %.1f -> %.1f%n", o.get("clients"), o.get("frames"), rounds, each, o.get("devices"), load0, load1);
      Result b = base.result(rounds * each);
      Result i = ingest.result(rounds * each);
      System.out.println("  baseline (group commit, no HTTP): " + b);
      System.out.println("  POST /ingest/v1/hotel_room:       " + i);
      System.out.printf("  HTTP ingest / baseline: %.0f %% of the frames/s; ack p50 %+.1f ms, p99 %+.1f ms%n", 100.0 * i.framesPerS / b.framesPerS,
          i.p50 - b.p50, i.p99 - b.p99);
      web.close();
    } finally {
      node.stop().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
      // the probe's report for the operators' list (Redis hash <prefix>:probes): this run's key only
      io.vertx.redis.client.Redis redis = io.vertx.redis.client.Redis.createClient(clients, "redis://127.0.0.1:6379");
      redis.send(io.vertx.redis.client.Request.cmd(io.vertx.redis.client.Command.DEL).arg(prefix + ":probes"))
          .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      redis.close();
      clients.close();
      Teardown.main(new String[] {"--yes", "--topology.prefix=" + prefix, "--pg.schema=" + prefix, "--slots.total=16"});
    }
  }

  private interface Push {
    Future<Integer> send();
  }

  private record Result(double framesPerS, double p50, double p99, int pushes) {
    @Override
    public String toString() {
      return String.format("%,.0f frames/s durable, ack p50 %.1f ms, p99 %.1f ms (%d pushes)", framesPerS, p50, p99, pushes);
    }
  }

  /** What one path measured, over all its rounds. */
  private static final class Sample {
    final List<Long> latencies = new ArrayList<>();
    long frames;

    synchronized void add(long nanos, int n) {
      latencies.add(nanos);
      frames += n;
    }

    synchronized Result result(int seconds) {
      long[] sorted = latencies.stream().mapToLong(Long::longValue).toArray();
      Arrays.sort(sorted);
      return new Result(frames / (double) seconds, pct(sorted, 0.50), pct(sorted, 0.99), sorted.length);
    }
  }

  /** {@code clients} loops for {@code seconds}; into {@code into} unless null (a warm-up). */
  private static void run(Vertx vertx, Push push, int clients, int seconds, Sample into) throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    List<Future<Void>> loops = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      Promise<Void> done = Promise.promise();
      vertx.runOnContext(v -> loop(push, end, into, done));
      loops.add(done.future());
    }
    Future.all(loops).toCompletionStage().toCompletableFuture().get(seconds + 120L, TimeUnit.SECONDS);
  }

  private static void loop(Push push, long end, Sample into, Promise<Void> done) {
    long t0 = System.nanoTime();
    if (t0 >= end) {
      done.complete();
      return;
    }
    push.send().onComplete(ar -> {
      long t1 = System.nanoTime();
      if (ar.failed()) {
        done.fail(ar.cause());
        return;
      }
      if (into != null && t1 <= end) into.add(t1 - t0, ar.result());
      loop(push, end, into, done);
    });
  }

  private static double pct(long[] sorted, double q) {
    if (sorted.length == 0) return Double.NaN;
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1)] / 1e6;
  }

  private static double load() {
    try {
      return Double.parseDouble(java.nio.file.Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    } catch (Exception e) {
      return Double.NaN;
    }
  }
}
