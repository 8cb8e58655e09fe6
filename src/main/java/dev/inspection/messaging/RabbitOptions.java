package dev.inspection.messaging;

import com.rabbitmq.client.Address;
import dev.inspection.common.Pem;
import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Where and how to reach RabbitMQ: the {@code rabbit.*} keys, read once. {@code addresses} are the broker
 * nodes a connection may use, in the order tried ({@code rabbit.addresses}, or {@code rabbit.host:rabbit.port}
 * alone when that is empty; {@link BrokerAddresses}). With {@code ssl} the broker's certificate is checked
 * against {@code tlsCa} (a PEM file; empty = the JVM's trust store) and must name the host connected to.
 */
public record RabbitOptions(List<Address> addresses, String user, String password, String vhost, boolean ssl, String tlsCa) {
  public RabbitOptions {
    addresses = List.copyOf(addresses);
    if (addresses.isEmpty()) throw new IllegalArgumentException("no broker address");
  }

  /** One broker node. */
  public RabbitOptions(String host, int port, String user, String password, String vhost, boolean ssl, String tlsCa) {
    this(List.of(new Address(host, port)), user, password, vhost, ssl, tlsCa);
  }

  /** Reads the keys (no file access: safe on the event loop); a malformed rabbit.addresses throws a {@link ConfigException} naming it. */
  public static RabbitOptions from(Config c) {
    return new RabbitOptions(addresses(c), c.get(Keys.RABBIT_USER), c.get(Keys.RABBIT_PASSWORD), c.get(Keys.RABBIT_VHOST),
        c.getBool(Keys.RABBIT_SSL), c.get(Keys.RABBIT_TLS_CA).trim());
  }

  private static List<Address> addresses(Config c) {
    try {
      return BrokerAddresses.parse(c.get(Keys.RABBIT_ADDRESSES), c.get(Keys.RABBIT_HOST).trim(), c.getInt(Keys.RABBIT_PORT));
    } catch (IllegalArgumentException e) {
      throw new ConfigException(Keys.RABBIT_ADDRESSES.name() + " '" + c.get(Keys.RABBIT_ADDRESSES) + "' is not a list of broker nodes: " + e.getMessage()
          + ". Write host:port,host:port,... (e.g. mq1:5672,mq2:5672,mq3:5672), or leave it empty to use rabbit.host and rabbit.port");
    }
  }

  /**
   * {@link #from}, a rabbit.tls.ca that is set must be a readable PEM certificate file, and rabbit.management.url
   * must be off or a list of http(s) URLs, queue.low.type classic or quorum (start-up validation; reads the file).
   */
  public static RabbitOptions validated(Config c) {
    RabbitOptions o = from(c);
    if (!o.tlsCa().isEmpty()) Pem.certificates(Keys.RABBIT_TLS_CA.name(), o.tlsCa());
    BrokerFence.Settings.from(c);
    String lowType = Topology.lowType(c);
    if (o.addresses().size() > 1 && lowType.equals("classic")) {
      LoggerFactory.getLogger(RabbitOptions.class).warn("{} lists {} RabbitMQ nodes but {}=classic: each low-priority queue lives on one node,"
          + " and while that node is down no client can declare the topology on any node. Set {}=quorum on a new installation (existing"
          + " queues keep their type: see README, Running on a RabbitMQ cluster)", Keys.RABBIT_ADDRESSES.name(), o.addresses().size(),
          Keys.QUEUE_LOW_TYPE.name(), Keys.QUEUE_LOW_TYPE.name());
    }
    return o;
  }

  /** host:port,.../vhost, for messages (never the password). */
  public String where() {
    return (ssl ? "amqps://" : "") + BrokerAddresses.show(addresses) + vhost;
  }
}
