package dev.inspection.messaging;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.ShutdownSignalException;
import dev.inspection.common.Backoff;
import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one AMQP connection up: connects in the background, and after any loss reconnects with
 * capped, jittered backoff. {@code onConnected} runs on the owner's context after every (re)connect
 * (declare the topology there, reopen channels); {@code onLost} runs on it after every loss.
 * The client's own automatic recovery is off: channels, consumers and confirm state are rebuilt by the
 * owner, which knows which of its deliveries and publishes died with the old connection.
 */
public final class RabbitConnector {
  private static final Logger log = LoggerFactory.getLogger(RabbitConnector.class);

  private final Vertx vertx;
  private final Context context;
  private final ConnectionFactory factory;
  private final String name;
  private final Backoff backoff;
  private final Function<Connection, Future<Void>> onConnected;
  private final Runnable onLost;
  private volatile Connection connection;
  private volatile boolean ready;
  private boolean stopped;
  private long generation;

  public RabbitConnector(Vertx vertx, Config config, String name, Function<Connection, Future<Void>> onConnected, Runnable onLost) {
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
    this.factory = factory(config);
    this.name = name;
    this.backoff = new Backoff(config.getLong(Keys.BACKOFF_INITIAL_MS), config.getLong(Keys.BACKOFF_MAX_MS));
    this.onConnected = onConnected;
    this.onLost = onLost;
  }

  public static ConnectionFactory factory(Config config) {
    ConnectionFactory f = new ConnectionFactory();
    f.setHost(config.get(Keys.RABBIT_HOST));
    f.setPort(config.getInt(Keys.RABBIT_PORT));
    f.setUsername(config.get(Keys.RABBIT_USER));
    f.setPassword(config.get(Keys.RABBIT_PASSWORD));
    f.setVirtualHost(config.get(Keys.RABBIT_VHOST));
    f.setAutomaticRecoveryEnabled(false);
    f.setTopologyRecoveryEnabled(false);
    f.setConnectionTimeout(5000);
    f.setRequestedHeartbeat(10);
    if (config.getBool(Keys.RABBIT_SSL)) {
      try {
        f.useSslProtocol();
      } catch (Exception e) {
        throw new IllegalStateException("cannot set up TLS to RabbitMQ: " + e.getMessage(), e);
      }
    }
    return f;
  }

  private Runnable afterReady = () -> { };

  /** Runs on the owner's context each time a (re)connect and its set-up have completed. */
  public RabbitConnector onReady(Runnable r) {
    this.afterReady = r;
    return this;
  }

  /** Starts connecting in the background; never fails (a broker that is down is retried). */
  public void start() {
    context.runOnContext(v -> attempt());
  }

  /** Connected and the owner's set-up ({@code onConnected}) has finished. */
  public boolean isConnected() {
    Connection c = connection;
    return ready && c != null && c.isOpen();
  }

  public Connection connection() {
    return connection;
  }

  private void attempt() {
    if (stopped) return;
    long gen = ++generation;
    vertx.executeBlocking(() -> factory.newConnection(name), false).onComplete(ar -> {
      if (stopped) {
        if (ar.succeeded()) closeQuietly(ar.result());
        return;
      }
      if (ar.failed()) {
        long delay = backoff.next();
        log.warn("{}: cannot connect to RabbitMQ at {}:{} ({}); retrying in {} ms (attempt {})", name, factory.getHost(),
            factory.getPort(), ar.cause().getMessage(), delay, backoff.attempts());
        vertx.setTimer(delay, t -> attempt());
        return;
      }
      Connection c = ar.result();
      c.addShutdownListener(cause -> context.runOnContext(v -> lost(gen, cause)));
      connection = c;
      onConnected.apply(c).onComplete(done -> {
        if (done.succeeded()) {
          ready = true;
          afterReady.run();
          if (backoff.attempts() > 0) log.info("{}: connected to RabbitMQ again after {} attempt(s)", name, backoff.attempts());
          backoff.reset();
        } else {
          log.warn("{}: set-up after connecting failed ({}); reconnecting", name, done.cause().toString());
          vertx.executeBlocking(() -> {
            closeQuietly(c);
            return null;
          }, false);
        }
      });
    });
  }

  private void lost(long gen, ShutdownSignalException cause) {
    if (gen != generation || stopped) return;
    connection = null;
    ready = false;
    if (!cause.isInitiatedByApplication()) {
      log.warn("{}: RabbitMQ connection lost: {}", name, cause.getMessage());
    }
    onLost.run();
    long delay = backoff.next();
    vertx.setTimer(delay, t -> attempt());
  }

  public Future<Void> stop() {
    stopped = true;
    ready = false;
    Connection c = connection;
    connection = null;
    if (c == null) return Future.succeededFuture();
    return vertx.executeBlocking(() -> {
      closeQuietly(c);
      return null;
    }, false).mapEmpty();
  }

  private static void closeQuietly(Connection c) {
    try {
      if (c.isOpen()) c.close(2000);
    } catch (Exception ignored) {
      // closing a broken connection: nothing to do
    }
  }
}
