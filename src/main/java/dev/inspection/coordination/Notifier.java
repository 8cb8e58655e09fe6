package dev.inspection.coordination;

import dev.inspection.common.Backoff;
import dev.inspection.common.Retry;
import dev.inspection.common.RetryPolicy;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import io.vertx.redis.client.ResponseType;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Redis pub/sub as an accelerator only (INV-14): a lease change is announced so that other nodes look at
 * the database now instead of at their next poll. Losing Redis, or a message, only slows things down:
 * every decision is taken from PostgreSQL. The subscription reconnects through {@link Retry}.
 */
public final class Notifier {
  private static final Logger log = LoggerFactory.getLogger(Notifier.class);

  private final Vertx vertx;
  private final String url;
  private final String channel;
  private final Retry retry;
  /** Delay before subscribing again after a loss; reset once a subscription holds. */
  private final Backoff afterLoss;
  private final Consumer<String> onMessage;
  private Redis publisher;
  private RedisConnection subscription;
  private boolean stopped;
  private volatile boolean connected;

  public Notifier(Vertx vertx, String url, String channelPrefix, RetryPolicy retryPolicy, Consumer<String> onMessage) {
    this(vertx, url, channelPrefix, "lease", retryPolicy, onMessage);
  }

  /** A notifier on the channel {@code {channelPrefix}:{topic}} (e.g. {@code fleet-mode}) instead of the lease channel. */
  public Notifier(Vertx vertx, String url, String channelPrefix, String topic, RetryPolicy retryPolicy, Consumer<String> onMessage) {
    this.vertx = vertx;
    this.url = url;
    this.channel = channelPrefix + ":" + topic;
    this.retry = new Retry(vertx, retryPolicy, log);
    this.afterLoss = retryPolicy.backoff();
    this.onMessage = onMessage;
  }

  public boolean connected() {
    return connected;
  }

  public void start() {
    publisher = Redis.createClient(vertx, new RedisOptions().setConnectionString(url).setMaxPoolSize(2).setMaxPoolWaiting(100));
    subscribe();
  }

  private void subscribe() {
    if (stopped) return;
    // results are unaffected while this fails: notifications only make other nodes look sooner
    retry.until("subscribe to Redis notifications (results are unaffected meanwhile)", () -> Redis.createClient(vertx, url).connect()
        .compose(conn -> conn.send(Request.cmd(Command.SUBSCRIBE).arg(channel)).map(conn)
            .onFailure(e -> conn.close())), e -> false, () -> stopped)
        .onSuccess(conn -> {
          if (stopped) {
            conn.close();
            return;
          }
          subscription = conn;
          conn.handler(this::received);
          conn.exceptionHandler(e -> lost(conn, e.getMessage()));
          conn.endHandler(v -> lost(conn, "connection closed"));
          afterLoss.reset();
          connected = true;
        });
  }

  private void received(Response r) {
    // pub/sub frames: ["message", channel, payload]
    if (r.type() == ResponseType.PUSH || r.type() == ResponseType.MULTI) {
      if (r.size() == 3 && "message".equals(r.get(0).toString())) onMessage.accept(r.get(2).toString());
    }
  }

  private void lost(RedisConnection conn, String why) {
    if (conn != subscription || stopped) return;
    subscription = null;
    connected = false;
    long d = afterLoss.next();
    log.warn("Redis subscription lost ({}); retrying in {} ms", why, d);
    vertx.setTimer(d, t -> subscribe());
  }

  /** Best effort: a failed publish is logged and forgotten. */
  public void publish(String message) {
    if (publisher == null || stopped) return;
    publisher.send(Request.cmd(Command.PUBLISH).arg(channel).arg(message))
        .onFailure(e -> log.debug("Redis publish failed: {}", e.getMessage()));
  }

  public Future<Void> stop() {
    stopped = true;
    connected = false;
    if (subscription != null) subscription.close();
    if (publisher != null) publisher.close();
    return Future.succeededFuture();
  }
}
