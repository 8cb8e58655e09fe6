package dev.inspection.messaging;

import com.rabbitmq.client.Address;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.ShutdownSignalException;
import dev.inspection.common.Backoff;
import dev.inspection.common.Pem;
import dev.inspection.common.Retry;
import dev.inspection.common.RetryPolicy;
import dev.inspection.config.Keys;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one AMQP connection up: connects in the background, and after any loss reconnects with
 * capped, jittered backoff. {@code onConnected} runs on the owner's context after every (re)connect
 * (declare the topology there, reopen channels); {@code onLost} runs on it after every loss.
 * The client's own automatic recovery is off: channels, consumers and confirm state are rebuilt by the
 * owner, which knows which of its deliveries and publishes died with the old connection.
 *
 * <p>With several broker nodes ({@code rabbit.addresses}) each attempt tries them in turn, starting after
 * the node whose connection was lost (or whose set-up failed) and trying that one last
 * ({@link BrokerAddresses#after}): losing a cluster node moves the connection to the next node within one
 * reconnect, with the same set-up (topology declared again, channels and consumers reopened).
 */
public final class RabbitConnector {
  private static final Logger log = LoggerFactory.getLogger(RabbitConnector.class);

  private final Vertx vertx;
  private final Context context;
  private final RabbitOptions options;
  /** Built on the first connect attempt, off the event loop (with rabbit.ssl it reads rabbit.tls.ca). */
  private volatile ConnectionFactory factory;
  private final String name;
  private final Retry retry;
  /** Delay before reconnecting after a loss; reset only once a connection's set-up succeeded (a set-up that keeps failing must not spin). */
  private final Backoff afterLoss;
  private final Function<Connection, Future<Void>> onConnected;
  private final Runnable onLost;
  private volatile Connection connection;
  /** The broker node of the last connection: a reconnect tries it last. */
  private volatile Address lastNode;
  private volatile boolean ready;
  private boolean stopped;
  private long generation;

  public RabbitConnector(Vertx vertx, RabbitOptions options, RetryPolicy retryPolicy, String name, Function<Connection, Future<Void>> onConnected,
      Runnable onLost) {
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
    this.options = options;
    this.name = name;
    this.retry = new Retry(vertx, retryPolicy, log);
    this.afterLoss = retryPolicy.backoff();
    this.onConnected = onConnected;
    this.onLost = onLost;
  }

  public static ConnectionFactory factory(RabbitOptions o) {
    ConnectionFactory f = new ConnectionFactory();
    // every connection names its node (newConnection(addresses)); host and port are the first node's, for other users of the factory
    f.setHost(o.addresses().get(0).getHost());
    f.setPort(o.addresses().get(0).getPort());
    f.setUsername(o.user());
    f.setPassword(o.password());
    f.setVirtualHost(o.vhost());
    f.setAutomaticRecoveryEnabled(false);
    f.setTopologyRecoveryEnabled(false);
    f.setConnectionTimeout(5000);
    f.setRequestedHeartbeat(10);
    if (o.ssl()) {
      // the broker's certificate must chain to rabbit.tls.ca (or the JVM's trust store) and name the host connected to
      f.useSslProtocol(Pem.trusting(Keys.RABBIT_TLS_CA.name(), o.tlsCa()));
      f.enableHostnameVerification();
    }
    return f;
  }

  /** Opens one connection, trying {@code o}'s broker nodes in order (blocking: off the event loop). */
  public static Connection open(RabbitOptions o, String name) throws IOException, TimeoutException {
    return factory(o).newConnection(o.addresses(), name);
  }

  private Runnable afterReady = () -> { };
  private Map<String, Object> clientProperties = Map.of();

  /** Extra client properties of every connection (e.g. {@link BrokerConnections#workerProperties}); call before {@link #start}. */
  public RabbitConnector clientProperties(Map<String, Object> extra) {
    this.clientProperties = Map.copyOf(extra);
    return this;
  }

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
    retry.until(name + ": connect to RabbitMQ at " + options.where(),
        () -> vertx.executeBlocking(() -> {
          if (factory == null) {
            ConnectionFactory f = factory(options);
            Map<String, Object> props = new HashMap<>(f.getClientProperties());
            props.putAll(clientProperties);
            f.setClientProperties(props);
            factory = f;
          }
          return connectToAny(BrokerAddresses.after(options.addresses(), lastNode));
        }, false), e -> false, () -> stopped).onComplete(ar -> {
          if (ar.failed()) return; // stopped
          Connection c = ar.result();
          if (stopped) {
            closeQuietly(c);
            return;
          }
          c.addShutdownListener(cause -> context.runOnContext(v -> lost(gen, cause)));
          connection = c;
          onConnected.apply(c).onComplete(done -> {
            if (done.succeeded()) {
              ready = true;
              afterLoss.reset();
              afterReady.run();
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
    vertx.setTimer(afterLoss.next(), t -> attempt());
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

  /**
   * Tries the nodes in {@code order}, one at a time, and remembers which one took the connection (blocking).
   * Fails with the last node's error, the others' attached as suppressed, when none does.
   */
  private Connection connectToAny(List<Address> order) throws IOException, TimeoutException {
    Exception last = null;
    for (Address node : order) {
      try {
        Connection c = factory.newConnection(List.of(node), name);
        lastNode = node;
        if (order.size() > 1) log.info("{}: connected to RabbitMQ node {}", name, BrokerAddresses.show(List.of(node)));
        return c;
      } catch (IOException | TimeoutException e) {
        if (last != null) e.addSuppressed(last);
        last = e;
        if (order.size() > 1) log.debug("{}: RabbitMQ node {} refused or did not answer: {}", name, BrokerAddresses.show(List.of(node)), e.toString());
      }
    }
    if (last instanceof IOException io) throw io;
    throw (TimeoutException) last;
  }

  private static void closeQuietly(Connection c) {
    try {
      if (c.isOpen()) c.close(2000);
    } catch (Exception ignored) {
      // closing a broken connection: nothing to do
    }
  }
}
