package dev.inspection.coordination;

import dev.inspection.common.Backoff;
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
 * every decision is taken from PostgreSQL. The subscription reconnects with capped, jittered backoff.
 */
public final class Notifier {
  private static final Logger log = LoggerFactory.getLogger(Notifier.class);

  private final Vertx vertx;
  private final String url;
  private final String channel;
  private final Backoff backoff;
  private final Consumer<String> onMessage;
  private Redis publisher;
  private RedisConnection subscription;
  private boolean stopped;
  private volatile boolean connected;

  public Notifier(Vertx vertx, String url, String channelPrefix, Backoff backoff, Consumer<String> onMessage) {
    this.vertx = vertx;
    this.url = url;
    this.channel = channelPrefix + ":lease";
    this.backoff = backoff;
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
    Redis.createClient(vertx, url).connect().compose(conn -> {
      subscription = conn;
      conn.handler(this::received);
      conn.exceptionHandler(e -> lost(conn, e.getMessage()));
      conn.endHandler(v -> lost(conn, "connection closed"));
      return conn.send(Request.cmd(Command.SUBSCRIBE).arg(channel));
    }).onSuccess(r -> {
      if (backoff.attempts() > 0) log.info("Redis notifications subscribed again after {} attempt(s)", backoff.attempts());
      backoff.reset();
      connected = true;
    }).onFailure(e -> {
      long d = backoff.next();
      log.warn("cannot subscribe to Redis at {} ({}); notifications off, retrying in {} ms (results are unaffected)", url, e.getMessage(), d);
      vertx.setTimer(d, t -> subscribe());
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
    long d = backoff.next();
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
