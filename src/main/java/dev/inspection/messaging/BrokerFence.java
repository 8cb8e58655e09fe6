package dev.inspection.messaging;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker side of a takeover: closes a deposed worker's AMQP connections through RabbitMQ's management
 * HTTP API ({@code GET /api/connections}, then {@code DELETE /api/connections/{name}} for each one that
 * {@link BrokerConnections#ofWorker} picks). With single-active-consumer a hung worker's consumers stay the
 * active ones, holding their prefetch unacked, until the broker drops the connection on heartbeat; closing
 * it requeues what it held and makes the new owner's waiting consumer active at once. The lease epoch
 * (D1) still fences anything the old worker tries to write; this only makes the new owner consume sooner.
 *
 * <p>Never fails: when the API cannot be reached or refuses, it logs once what to do and the takeover goes
 * on as before (the broker's heartbeat ends the connection eventually). {@code rabbit.management.url=off}
 * turns it off. With several URLs (a cluster's nodes) each request goes to the one that answered last, and
 * to the next when it gives no answer. Non-blocking (Vert.x web client); callbacks run on the caller's context.
 */
public final class BrokerFence {
  private static final Logger log = LoggerFactory.getLogger(BrokerFence.class);
  private static final long TIMEOUT_MS = 10_000;
  /** What to do when the management API hides the connections' client_properties. */
  private static final String STATS_FIX = "Remove management_agent.disable_metrics_collector = true and management.disable_stats = true from"
      + " rabbitmq.conf and restart the broker (README, \"Running on a RabbitMQ cluster\").";

  /**
   * Where the management API is — one URL, or several (one per broker node of a cluster: any node lists and
   * closes every connection of the cluster) — and whose connections count (vhost, installation).
   */
  public record Settings(List<String> urls, String user, String password, String vhost, String installation) {
    public Settings {
      urls = List.copyOf(urls);
    }

    public static Settings from(Config c) {
      return new Settings(urls(c.get(Keys.RABBIT_MANAGEMENT_URL)), c.get(Keys.RABBIT_MANAGEMENT_USER), c.get(Keys.RABBIT_MANAGEMENT_PASSWORD),
          c.get(Keys.RABBIT_VHOST), c.get(Keys.TOPOLOGY_PREFIX));
    }

    /**
     * The URLs of a rabbit.management.url value: {@code off} or empty gives none; otherwise comma-separated
     * http(s) URLs, trailing slashes dropped. A malformed entry throws a {@link ConfigException} naming the key.
     */
    public static List<String> urls(String value) {
      String v = value == null ? "" : value.trim();
      if (v.isEmpty() || v.equalsIgnoreCase("off")) return List.of();
      List<String> out = new ArrayList<>();
      for (String part : v.split(",", -1)) {
        String url = part.trim();
        while (url.endsWith("/")) url = url.substring(0, url.length() - 1);
        String rest = url.startsWith("http://") ? url.substring(7) : url.startsWith("https://") ? url.substring(8) : null;
        if (rest == null || rest.isEmpty() || rest.startsWith("/") || rest.startsWith(":") || rest.contains(" ")) {
          throw new ConfigException(Keys.RABBIT_MANAGEMENT_URL.name() + " entry '" + part.trim() + "' is not an http(s) URL of a broker node's"
              + " management API: write http://host:15672 (several, comma-separated, for a cluster: they are tried in turn until one answers),"
              + " or off");
        }
        if (!out.contains(url)) out.add(url);
      }
      return List.copyOf(out);
    }

    public boolean off() {
      return urls.isEmpty();
    }
  }

  private final Settings settings;
  private final WebClient web;
  /** The "cannot reach the management API" warning is logged once, until a fence works again. */
  private final AtomicBoolean warned = new AtomicBoolean();
  /** Set once the management API was seen hiding the connections' client_properties (the warning is logged once per process). */
  private final AtomicBoolean hiddenWarned = new AtomicBoolean();
  /** The URL that answered last: tried first next time (only touched on the caller's context). */
  private int preferred;

  public BrokerFence(Vertx vertx, Settings settings) {
    this.settings = settings;
    this.web = settings.off() ? null : WebClient.create(vertx, new WebClientOptions().setConnectTimeout((int) TIMEOUT_MS).setKeepAlive(false));
  }

  public boolean enabled() {
    return web != null;
  }

  /**
   * Asks the management API once at start ({@code GET /api/overview}), from the context that fences later:
   * the HTTP client's first request on an event loop builds its address resolver there, which took seconds on
   * a loaded machine — at the first DEAD that delayed the leader's next round by as much. It also says at
   * start-up, not at the first death, whether the fence will work: the API answers, and it keeps the statistics
   * that list a connection's client_properties ({@link BrokerConnections#statsDisabled}).
   */
  public Future<Void> check() {
    if (web == null) return Future.succeededFuture();
    return send(HttpMethod.GET, "/api/overview", r -> r).<Void>map(resp -> {
          expect(resp, 200, "GET /api/overview");
          if (BrokerConnections.statsDisabled(resp.bodyAsJsonObject()) && hiddenWarned.compareAndSet(false, true)) {
            log.warn("broker fence: the RabbitMQ management API at {} keeps no statistics (disable_stats), so it lists connections without"
                + " their client_properties: a dead or hung worker's connections cannot be found and none is closed, and its queues reach the"
                + " new owner only at the heartbeat timeout. " + STATS_FIX + " Logged once.", url());
          } else {
            log.info("broker fence: the RabbitMQ management API at {} answers", url());
          }
          return null;
        }).recover(e -> {
          if (warned.compareAndSet(false, true)) {
            log.warn("broker fence: the RabbitMQ management API at {} does not work ({}): a dead worker's AMQP connections cannot be closed"
                + " and its queues reach the new owner only when the broker drops the connection. Enable the plugin (rabbitmq-plugins enable"
                + " rabbitmq_management; scripts/ensure-services.sh does it here), check rabbit.management.url, rabbit.management.user and"
                + " rabbit.management.password, or set rabbit.management.url=off. Logged once until it works.", url(), e.getMessage());
          }
          return Future.succeededFuture();
        });
  }

  /**
   * Closes every AMQP connection of {@code workerId} of this installation; the number closed, or -1 when the
   * management API could not be used (logged). {@code why} goes to the worker as the close reason.
   */
  public Future<Integer> closeWorker(String workerId, String why) {
    if (web == null) return Future.succeededFuture(0);
    long start = System.nanoTime();
    return send(HttpMethod.GET, "/api/connections?columns=name,vhost,client_properties", r -> r)
        .compose(resp -> {
          expect(resp, 200, "GET /api/connections");
          JsonArray listed = resp.bodyAsJsonArray();
          if (BrokerConnections.propertiesHidden(listed) && hiddenWarned.compareAndSet(false, true)) {
            log.warn("broker fence: the RabbitMQ management API at {} lists {} connection(s) but none with its client_properties, so worker {}'s"
                + " connections cannot be found and none is closed: its queues reach the new owner only at the heartbeat timeout. " + STATS_FIX
                + " Logged once.", url(), listed.size(), workerId);
          }
          List<String> names = BrokerConnections.ofWorker(listed, workerId, settings.installation(), settings.vhost());
          List<Future<Void>> closes = new ArrayList<>();
          for (String name : names) closes.add(close(name, "worker " + workerId + " fenced by the scheduler leader: " + why));
          return Future.all(closes).map(v -> names.size());
        })
        .map(n -> {
          if (warned.compareAndSet(true, false)) log.info("broker fence: the RabbitMQ management API at {} works again", url());
          long ms = (System.nanoTime() - start) / 1_000_000;
          if (n > 0) log.info("broker fence: closed {} AMQP connection(s) of worker {} in {} ms ({})", n, workerId, ms, why);
          else log.info("broker fence: worker {} has no AMQP connection open ({}; looked in {} ms)", workerId, why, ms);
          return n;
        })
        .recover(e -> {
          if (warned.compareAndSet(false, true)) {
            log.warn("broker fence: cannot close worker {}'s AMQP connections through the RabbitMQ management API at {} ({}). Its queues reach the"
                + " new owner only when the broker drops the connection (heartbeat timeout) — a hung worker's slots commit nothing until then."
                + " Enable the plugin (rabbitmq-plugins enable rabbitmq_management; scripts/ensure-services.sh does it here), check"
                + " rabbit.management.url, rabbit.management.user (tagged administrator) and rabbit.management.password, or set"
                + " rabbit.management.url=off to stop trying. Logged once until it works.", workerId, url(), e.getMessage());
          } else {
            log.debug("broker fence: worker {}: {}", workerId, e.getMessage());
          }
          return Future.succeededFuture(-1);
        });
  }

  private Future<Void> close(String name, String reason) {
    String path = "/api/connections/" + URLEncoder.encode(name, StandardCharsets.UTF_8).replace("+", "%20");
    return send(HttpMethod.DELETE, path, r -> r.putHeader("X-Reason", reason)).map(resp -> {
          // 404: the connection ended meanwhile, which is what was wanted
          if (resp.statusCode() != 404) expect(resp, 204, "DELETE /api/connections/" + name);
          return null;
        });
  }

  /** The URL tried first (the one that answered last), or all of them for a message before any answered. */
  private String url() {
    return settings.urls().get(preferred);
  }

  /**
   * Sends one request to the management API, trying the URLs in turn from the one that answered last: a URL
   * that gives no answer (refused, unreachable, timed out: a broker node that is down) hands the request to
   * the next; any HTTP answer ends the search, and its URL is tried first from then on.
   */
  private Future<HttpResponse<Buffer>> send(HttpMethod method, String path, UnaryOperator<HttpRequest<Buffer>> decorate) {
    return sendFrom(method, path, decorate, preferred, 0);
  }

  private Future<HttpResponse<Buffer>> sendFrom(HttpMethod method, String path, UnaryOperator<HttpRequest<Buffer>> decorate, int index, int tried) {
    List<String> urls = settings.urls();
    String base = urls.get(index);
    HttpRequest<Buffer> req = web.requestAbs(method, base + path).basicAuthentication(settings.user(), settings.password()).timeout(TIMEOUT_MS);
    return decorate.apply(req).send().map(resp -> {
      if (preferred != index) log.info("broker fence: using the RabbitMQ management API at {} ({} does not answer)", base, urls.get(preferred));
      preferred = index;
      return resp;
    }).recover(e -> {
      if (tried + 1 >= urls.size()) {
        return Future.failedFuture(urls.size() == 1 ? e : new IllegalStateException("none of " + String.join(", ", urls) + " answers; last: " + e.getMessage(), e));
      }
      log.debug("broker fence: {} does not answer ({}); trying the next URL", base, e.toString());
      return sendFrom(method, path, decorate, (index + 1) % urls.size(), tried + 1);
    });
  }

  private static void expect(HttpResponse<?> resp, int status, String what) {
    if (resp.statusCode() == status || (status == 204 && resp.statusCode() == 200)) return;
    String hint = resp.statusCode() == 401 ? ": wrong user or password" : resp.statusCode() == 403 ? ": the user may not do this (tag it administrator)" : "";
    throw new IllegalStateException(what + " answered " + resp.statusCode() + hint);
  }

  public void close() {
    if (web != null) web.close();
  }

}
