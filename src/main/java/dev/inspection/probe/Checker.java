package dev.inspection.probe;

import dev.inspection.inventory.Device;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import java.util.Random;

/**
 * Runs one check and returns the status payload. A failed check is a result ({@code status: DOWN} with
 * the reason), never a failed future.
 */
public final class Checker {
  private final NetClient net;
  private final HttpClient http;
  private final long timeoutMs;
  private final double simFailRate;
  private final Random random;

  public Checker(Vertx vertx, long timeoutMs, double simFailRate, Random random) {
    this.net = vertx.createNetClient(new NetClientOptions().setConnectTimeout((int) timeoutMs));
    this.http = vertx.createHttpClient(new HttpClientOptions().setConnectTimeout((int) timeoutMs).setKeepAlive(false));
    this.timeoutMs = timeoutMs;
    this.simFailRate = simFailRate;
    this.random = random;
  }

  public Future<JsonObject> check(Device d) {
    return switch (d.checkType()) {
      case "tcp" -> tcp(d);
      case "http" -> http(d);
      default -> Future.succeededFuture(sim(d));
    };
  }

  /** A simulated device: DOWN with probability {@code fail_rate} (spec) or probe.sim.fail.rate. */
  JsonObject sim(Device d) {
    double rate = d.checkSpec().getDouble("fail_rate", simFailRate);
    boolean up = random.nextDouble() >= rate;
    return new JsonObject().put("check", "sim").put("status", up ? "UP" : "DOWN").put("latency_ms", 1 + random.nextInt(50));
  }

  private Future<JsonObject> tcp(Device d) {
    long start = System.nanoTime();
    String host = d.checkSpec().getString("host");
    int port = d.checkSpec().getInteger("port");
    return net.connect(port, host)
        .map(so -> {
          so.close();
          return new JsonObject().put("check", "tcp").put("status", "UP").put("latency_ms", (System.nanoTime() - start) / 1_000_000);
        })
        .recover(e -> Future.succeededFuture(down("tcp", start, e)));
  }

  private Future<JsonObject> http(Device d) {
    long start = System.nanoTime();
    int expect = d.checkSpec().getInteger("expect_status", 200);
    RequestOptions ro = new RequestOptions().setAbsoluteURI(d.checkSpec().getString("url")).setMethod(HttpMethod.GET)
        .setTimeout(timeoutMs);
    return http.request(ro)
        .compose(req -> req.send())
        .compose(resp -> resp.body().map(b -> {
          long ms = (System.nanoTime() - start) / 1_000_000;
          return new JsonObject().put("check", "http").put("status", resp.statusCode() == expect ? "UP" : "DOWN")
              .put("http_status", resp.statusCode()).put("latency_ms", ms);
        }))
        .recover(e -> Future.succeededFuture(down("http", start, e)));
  }

  private static JsonObject down(String check, long start, Throwable e) {
    return new JsonObject().put("check", check).put("status", "DOWN").put("latency_ms", (System.nanoTime() - start) / 1_000_000)
        .put("error", String.valueOf(e.getMessage()));
  }
}
