package dev.inspection.messaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.Address;
import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.node.Node;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BrokerAddressesTest {

  private static String shown(String value) {
    return BrokerAddresses.show(BrokerAddresses.parse(value, "127.0.0.1", 5672));
  }

  @Test
  void anEmptyListIsRabbitHostAndPortAlone() {
    assertEquals("127.0.0.1:5672", shown(""));
    assertEquals("127.0.0.1:5672", shown("   "));
  }

  @Test
  void aListKeepsItsOrderAndAMissingPortIsTheDefault() {
    assertEquals("mq1:5681,mq2:5672,10.0.0.3:5683", shown("mq1:5681, mq2 ,10.0.0.3:5683"));
  }

  @Test
  void anIpv6LiteralGoesInBrackets() {
    List<Address> a = BrokerAddresses.parse("[::1]:5671,[fe80::1]", "h", 5672);
    assertEquals("::1", a.get(0).getHost());
    assertEquals(5671, a.get(0).getPort());
    assertEquals(5672, a.get(1).getPort());
    assertEquals("[::1]:5671,[fe80::1]:5672", BrokerAddresses.show(a));
  }

  @Test
  void malformedEntriesAreRefusedSayingWhichAndWhy() {
    Map<String, String> bad = Map.of(
        "mq1:5672,", "empty",
        "mq1:5672,,mq2:5672", "empty",
        "mq1:notaport", "not a number",
        "mq1:0", "not in 1..65535",
        "mq1:65536", "not in 1..65535",
        ":5672", "no host",
        "::1:5672", "brackets",
        "[::1]5672", "after ']'",
        "mq 1:5672", "not a host name",
        "mq1:5672,MQ1:5672", "listed twice");
    bad.forEach((value, why) -> {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BrokerAddresses.parse(value, "h", 5672), value);
      assertTrue(e.getMessage().contains(why), value + " -> " + e.getMessage());
    });
  }

  @Test
  void aReconnectStartsAfterTheLostNodeAndTriesItLast() {
    List<Address> all = BrokerAddresses.parse("a:1,b:2,c:3", "h", 5672);
    assertEquals("b:2,c:3,a:1", BrokerAddresses.show(BrokerAddresses.after(all, new Address("a", 1))));
    assertEquals("a:1,b:2,c:3", BrokerAddresses.show(BrokerAddresses.after(all, new Address("c", 3))));
    assertEquals("a:1,b:2,c:3", BrokerAddresses.show(BrokerAddresses.after(all, null)), "first connect: the list as given");
    assertEquals("a:1,b:2,c:3", BrokerAddresses.show(BrokerAddresses.after(all, new Address("x", 9))), "unknown node: the list as given");
    List<Address> one = BrokerAddresses.parse("", "h", 5672);
    assertEquals("h:5672", BrokerAddresses.show(BrokerAddresses.after(one, new Address("h", 5672))));
  }

  @Test
  void aMalformedAddressListStopsStartUpNamingTheKey() {
    Config c = Config.of(Map.of("rabbit.addresses", "mq1:5672,mq2:port"));
    ConfigException e = assertThrows(ConfigException.class, () -> Node.validate(c));
    assertTrue(e.getMessage().startsWith("rabbit.addresses 'mq1:5672,mq2:port' is not a list of broker nodes: 'mq2:port': port 'port' is not a number"),
        e.getMessage());
  }

  @Test
  void theOptionsCarryTheListOrRabbitHostAndPort() {
    assertEquals("mq1:5672,mq2:5672/", RabbitOptions.from(Config.of(Map.of("rabbit.addresses", "mq1,mq2"))).where());
    assertEquals("amqps://mq0:5671/v", RabbitOptions.from(Config.of(Map.of("rabbit.host", "mq0", "rabbit.port", "5671", "rabbit.ssl", "true",
        "rabbit.vhost", "/v"))).where().replace("//v", "/v"));
  }

  @Test
  void managementUrlsAreAListOrOff() {
    assertEquals(List.of(), BrokerFence.Settings.urls("off"));
    assertEquals(List.of(), BrokerFence.Settings.urls(" "));
    assertEquals(List.of("http://127.0.0.1:15672"), BrokerFence.Settings.urls("http://127.0.0.1:15672/"));
    assertEquals(List.of("http://mq1:15672", "https://mq2:15671"), BrokerFence.Settings.urls("http://mq1:15672, https://mq2:15671/,http://mq1:15672"));
    for (String bad : List.of("mq1:15672", "http://mq1:15672,,http://mq2:15672", "http://", "ftp://mq1", "http://mq1:15672,off")) {
      ConfigException e = assertThrows(ConfigException.class, () -> BrokerFence.Settings.urls(bad), bad);
      assertTrue(e.getMessage().startsWith("rabbit.management.url entry"), e.getMessage());
    }
    ConfigException e = assertThrows(ConfigException.class, () -> Node.validate(Config.of(Map.of("rabbit.management.url", "mq1:15672"))));
    assertTrue(e.getMessage().contains("rabbit.management.url"), e.getMessage());
  }

  @Test
  void theLowLaneIsAQuorumQueueOnRequestWithLowsLimits() {
    Topology classic = Topology.of(Config.of(Map.of()));
    assertEquals("classic", classic.queueArguments(Priority.LOW).get("x-queue-type"));
    Topology quorum = Topology.of(Config.of(Map.of("queue.low.type", "quorum", "queue.low.max.length", "77")));
    Map<String, Object> low = quorum.queueArguments(Priority.LOW);
    assertEquals("quorum", low.get("x-queue-type"));
    assertEquals(77, low.get("x-max-length"));
    assertEquals(Long.parseLong("4194304"), low.get("x-max-length-bytes"));
    assertEquals("reject-publish", low.get("x-overflow"));
    assertEquals(true, low.get("x-single-active-consumer"));
    assertEquals("quorum", quorum.queueArguments(Priority.HIGH).get("x-queue-type"));
    ConfigException e = assertThrows(ConfigException.class, () -> Node.validate(Config.of(Map.of("queue.low.type", "stream"))));
    assertTrue(e.getMessage().startsWith("queue.low.type must be classic or quorum"), e.getMessage());
  }
}
