package dev.inspection.probe;

import dev.inspection.inventory.Device;
import dev.inspection.inventory.TargetPolicy;
import io.vertx.core.Context;
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
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.URI;
import java.util.HashMap;
import java.util.Map;
import java.util.random.RandomGenerator;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one check and returns the status payload. A failed check is a result ({@code status: DOWN} with
 * the reason), never a failed future — and a spec the check cannot run (one that slipped past validation,
 * say from an old inventory cache) is such a result too, never an exception that stops the probe's round.
 *
 * <p>Targets: a host name is resolved first (on a worker thread: the JDK resolver blocks) and the address is judged
 * by the {@link TargetPolicy} before anything connects; the check then connects to that address, so a name cannot
 * resolve to one address for the policy and another for the connection. An http check reads at most
 * {@code maxBodyBytes} of the body, then closes the connection. An icmp check goes to the probe's one
 * {@link IcmpEngine}, opened with the first icmp device (a probe without any holds no ICMP socket).
 */
public final class Checker {
  private static final Logger log = LoggerFactory.getLogger(Checker.class);
  private final Vertx vertx;
  private final NetClient net;
  private final HttpClient http;
  private final long timeoutMs;
  private final double simFailRate;
  private final RandomGenerator random;
  /** Checks made of each flapping simulated device (only those: a small map), on the probe's event loop. */
  private final Map<String, Long> flapChecks = new HashMap<>();
  private final TargetPolicy policy;
  private final int maxBodyBytes;
  private final Supplier<IcmpEngine> openIcmp;
  private IcmpEngine icmp;

  public Checker(Vertx vertx, long timeoutMs, double simFailRate, RandomGenerator random, TargetPolicy policy, int maxBodyBytes) {
    this(vertx, timeoutMs, simFailRate, random, policy, maxBodyBytes, IcmpEngine::open);
  }

  /** {@code openIcmp}: opens the ICMP engine, called once, with the first icmp check. */
  Checker(Vertx vertx, long timeoutMs, double simFailRate, RandomGenerator random, TargetPolicy policy, int maxBodyBytes,
      Supplier<IcmpEngine> openIcmp) {
    this.vertx = vertx;
    this.net = vertx.createNetClient(new NetClientOptions().setConnectTimeout((int) timeoutMs));
    this.http = vertx.createHttpClient(new HttpClientOptions().setConnectTimeout((int) timeoutMs).setKeepAlive(false));
    this.timeoutMs = timeoutMs;
    this.simFailRate = simFailRate;
    this.random = random;
    this.policy = policy;
    this.maxBodyBytes = maxBodyBytes;
    this.openIcmp = openIcmp;
  }

  /** Stops the ICMP engine, if one was opened: its checks in flight end as DOWN ("the probe is stopping"). */
  public void close() {
    if (icmp != null) icmp.close();
  }

  public Future<JsonObject> check(Device d) {
    long start = System.nanoTime();
    try {
      return switch (d.checkType()) {
        case "tcp" -> tcp(d, start);
        case "http" -> http(d, start);
        case "icmp" -> icmp(d, start);
        default -> Future.succeededFuture(sim(d));
      };
    } catch (RuntimeException bad) {
      return Future.succeededFuture(down(d.checkType(), start, "check_spec cannot be run: " + bad.getMessage()));
    }
  }

  /** A simulated device: DOWN with probability {@code fail_rate} (spec) or probe.sim.fail.rate, or as its {@code pattern} says ({@link SimPattern}). */
  JsonObject sim(Device d) {
    boolean up;
    if (SimPattern.FLAP.equals(d.checkSpec().getString("pattern"))) {
      up = SimPattern.flapUp(flapChecks.merge(d.deviceId(), 1L, Long::sum) - 1 + SimPattern.offset(d.deviceId()));
    } else {
      up = random.nextDouble() >= d.checkSpec().getDouble("fail_rate", simFailRate);
    }
    return new JsonObject().put("check", "sim").put("status", up ? "UP" : "DOWN").put("latency_ms", 1 + random.nextInt(50));
  }

  private long timeout(Device d) {
    Long own = d.checkSpec().getLong("timeout_ms");
    return own == null ? timeoutMs : Math.min(timeoutMs, own);
  }

  /** The address to connect to, or a failed future with the policy's refusal. */
  private Future<InetAddress> resolve(String host) {
    String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    InetAddress literal = literal(h);
    Future<InetAddress> resolved = literal != null ? Future.succeededFuture(literal) : vertx.executeBlocking(() -> InetAddress.getByName(h), false);
    return resolved.compose(a -> {
      String refused = policy.refusal(a);
      return refused == null ? Future.succeededFuture(a) : Future.failedFuture(new TargetRefused(refused));
    });
  }

  /**
   * {@code host} when it is an IP address written out, read without the resolver (no hop to a worker thread: thousands
   * of icmp checks a second to addresses); null for a name. JDK: a string with ':' is only ever read as IPv6.
   */
  static InetAddress literal(String host) {
    try {
      if (host.indexOf(':') >= 0) return InetAddress.getByName(host);
      String[] parts = host.split("\\.", -1);
      if (parts.length != 4) return null;
      byte[] a = new byte[4];
      for (int i = 0; i < 4; i++) {
        if (parts[i].isEmpty() || parts[i].length() > 3 || !parts[i].chars().allMatch(Character::isDigit)) return null;
        int v = Integer.parseInt(parts[i]);
        if (v > 255) return null;
        a[i] = (byte) v;
      }
      return InetAddress.getByAddress(a);
    } catch (java.net.UnknownHostException e) {
      return null; // the resolver then says why, naming the host
    }
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

  /**
   * {@code count} echoes (default 3) {@code interval_ms} apart (default 200), each lost after the device's timeout;
   * UP when one was answered. The engine runs on its own thread: the result comes back on this check's context.
   */
  private Future<JsonObject> icmp(Device d, long start) {
    JsonObject spec = d.checkSpec();
    int count = spec.getInteger("count", 3);
    long interval = spec.getLong("interval_ms", 200L);
    long limit = timeout(d);
    if (icmp == null) {
      icmp = openIcmp.get();
      if (icmp.unavailable() != null) log.warn("icmp devices are refused: {}", icmp.unavailable());
    }
    if (icmp.unavailable() != null) return Future.succeededFuture(down("icmp", start, icmp.unavailable()));
    Context context = vertx.getOrCreateContext();
    return resolve(spec.getString("host")).compose(a -> {
      Promise<JsonObject> done = Promise.promise();
      int scope = a instanceof Inet6Address a6 ? a6.getScopeId() : 0; // the interface of a link-local address
      icmp.ping(a.getAddress(), scope, count, interval, limit, payload -> context.runOnContext(v -> done.complete(payload)));
      return done.future();
    }).recover(e -> Future.succeededFuture(down("icmp", start, String.valueOf(e.getMessage()))));
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
