package dev.inspection.probe;

import dev.inspection.inventory.Device;
import dev.inspection.inventory.TargetPolicy;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SocketAddress;
import java.net.InetAddress;
import java.net.URI;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Runs one check and returns the status payload. A failed check is a result ({@code status: DOWN} with
 * the reason), never a failed future — and a spec the check cannot run (one that slipped past validation,
 * say from an old inventory cache) is such a result too, never an exception that stops the probe's round.
 *
 * <p>Targets: a host name is resolved first (on a worker thread: the JDK resolver blocks) and the address is judged
 * by the {@link TargetPolicy} before anything connects; the check then connects to that address, so a name cannot
 * resolve to one address for the policy and another for the connection. An http check reads at most
 * {@code maxBodyBytes} of the body, then closes the connection.
 */
public final class Checker {
  private final Vertx vertx;
  private final NetClient net;
  private final HttpClient http;
  private final long timeoutMs;
  private final double simFailRate;
  private final Random random;
  private final TargetPolicy policy;
  private final int maxBodyBytes;

  public Checker(Vertx vertx, long timeoutMs, double simFailRate, Random random, TargetPolicy policy, int maxBodyBytes) {
    this.vertx = vertx;
    this.net = vertx.createNetClient(new NetClientOptions().setConnectTimeout((int) timeoutMs));
    this.http = vertx.createHttpClient(new HttpClientOptions().setConnectTimeout((int) timeoutMs).setKeepAlive(false));
    this.timeoutMs = timeoutMs;
    this.simFailRate = simFailRate;
    this.random = random;
    this.policy = policy;
    this.maxBodyBytes = maxBodyBytes;
  }

  public Future<JsonObject> check(Device d) {
    long start = System.nanoTime();
    try {
      return switch (d.checkType()) {
        case "tcp" -> tcp(d, start);
        case "http" -> http(d, start);
        default -> Future.succeededFuture(sim(d));
      };
    } catch (RuntimeException bad) {
      return Future.succeededFuture(down(d.checkType(), start, "check_spec cannot be run: " + bad.getMessage()));
    }
  }

  /** A simulated device: DOWN with probability {@code fail_rate} (spec) or probe.sim.fail.rate. */
  JsonObject sim(Device d) {
    double rate = d.checkSpec().getDouble("fail_rate", simFailRate);
    boolean up = random.nextDouble() >= rate;
    return new JsonObject().put("check", "sim").put("status", up ? "UP" : "DOWN").put("latency_ms", 1 + random.nextInt(50));
  }

  private long timeout(Device d) {
    Long own = d.checkSpec().getLong("timeout_ms");
    return own == null ? timeoutMs : Math.min(timeoutMs, own);
  }

  /** The address to connect to, or a failed future with the policy's refusal. */
  private Future<InetAddress> resolve(String host) {
    String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    return vertx.executeBlocking(() -> InetAddress.getByName(h), false).compose(a -> {
      String refused = policy.refusal(a);
      return refused == null ? Future.succeededFuture(a) : Future.failedFuture(new TargetRefused(refused));
    });
  }

  private Future<JsonObject> tcp(Device d, long start) {
    String host = d.checkSpec().getString("host");
    int port = d.checkSpec().getInteger("port");
    long limit = timeout(d);
    Future<NetSocket> connected = resolve(host).compose(a -> net.connect(SocketAddress.inetSocketAddress(port, a.getHostAddress())));
    connected.onSuccess(NetSocket::close); // also when it connects after the check's own timeout
    return connected.timeout(limit, TimeUnit.MILLISECONDS)
        .map(so -> new JsonObject().put("check", "tcp").put("status", "UP").put("latency_ms", (System.nanoTime() - start) / 1_000_000))
        .recover(e -> Future.succeededFuture(down("tcp", start, String.valueOf(e.getMessage()))));
  }

  private Future<JsonObject> http(Device d, long start) {
    int expect = d.checkSpec().getInteger("expect_status", 200);
    String url = d.checkSpec().getString("url");
    URI uri = URI.create(url);
    int port = uri.getPort() > 0 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    long limit = timeout(d);
    return resolve(uri.getHost()).compose(a -> http.request(new RequestOptions().setAbsoluteURI(url).setMethod(HttpMethod.GET)
            .setServer(SocketAddress.inetSocketAddress(port, a.getHostAddress())).setTimeout(limit)))
        .compose(req -> req.send().compose(resp -> {
          Promise<JsonObject> done = Promise.promise();
          long[] read = {0};
          JsonObject result = new JsonObject().put("check", "http").put("status", resp.statusCode() == expect ? "UP" : "DOWN")
              .put("http_status", resp.statusCode());
          resp.handler(buf -> {
            read[0] += buf.length();
            if (read[0] > maxBodyBytes && !done.future().isComplete()) {
              result.put("body_truncated_at", maxBodyBytes);
              done.tryComplete(result.put("latency_ms", (System.nanoTime() - start) / 1_000_000));
              close(req);
            }
          });
          resp.endHandler(v -> done.tryComplete(result.put("latency_ms", (System.nanoTime() - start) / 1_000_000)));
          resp.exceptionHandler(done::tryFail);
          return done.future();
        }))
        .recover(e -> Future.succeededFuture(down("http", start, String.valueOf(e.getMessage()))));
  }

  private static void close(HttpClientRequest req) {
    req.reset(); // the rest of the body is not read: the connection goes (keep-alive is off)
  }

  private static JsonObject down(String check, long start, String error) {
    return new JsonObject().put("check", check).put("status", "DOWN").put("latency_ms", (System.nanoTime() - start) / 1_000_000)
        .put("error", error);
  }

  /** The target policy refuses the address a check would connect to. */
  static final class TargetRefused extends RuntimeException {
    TargetRefused(String why) {
      super(why + " (probe.target.allow / probe.target.deny)", null, false, false);
    }
  }
}
