package dev.inspection.messaging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BrokerConnectionsTest {

  private static JsonObject conn(String name, String vhost, Map<String, Object> props) {
    JsonObject p = new JsonObject().put("product", "RabbitMQ").put("connection_name", "worker-x");
    props.forEach(p::put);
    return new JsonObject().put("name", name).put("vhost", vhost).put("client_properties", p);
  }

  @Test
  void aWorkersConnectionsAreFoundByItsIdAndInstallation() {
    JsonArray listed = new JsonArray()
        .add(conn("127.0.0.1:50001 -> 127.0.0.1:5672", "/", BrokerConnections.workerProperties("w1", "inspection")))
        .add(conn("127.0.0.1:50002 -> 127.0.0.1:5672", "/", BrokerConnections.workerProperties("w2", "inspection")))
        .add(conn("127.0.0.1:50003 -> 127.0.0.1:5672", "/", BrokerConnections.workerProperties("w1", "inspection")));
    assertEquals(List.of("127.0.0.1:50001 -> 127.0.0.1:5672", "127.0.0.1:50003 -> 127.0.0.1:5672"),
        BrokerConnections.ofWorker(listed, "w1", "inspection", "/"));
  }

  @Test
  void aWorkerOfTheSameIdInAnotherInstallationIsNeverFenced() {
    JsonArray listed = new JsonArray()
        .add(conn("a", "/", BrokerConnections.workerProperties("w1", "drill_1")))
        .add(conn("b", "/", BrokerConnections.workerProperties("w1", "drill_2")));
    assertEquals(List.of("b"), BrokerConnections.ofWorker(listed, "w1", "drill_2", "/"));
  }

  @Test
  void anotherVirtualHostIsLeftAlone() {
    JsonArray listed = new JsonArray().add(conn("a", "/other", BrokerConnections.workerProperties("w1", "inspection")));
    assertEquals(List.of(), BrokerConnections.ofWorker(listed, "w1", "inspection", "/"));
  }

  @Test
  void connectionsWithoutTheWorkerPropertiesAreNeverMatchedEvenByName() {
    JsonArray listed = new JsonArray()
        .add(new JsonObject().put("name", "a").put("vhost", "/").put("user_provided_name", "worker-w1"))
        .add(conn("b", "/", Map.of("connection_name", "worker-w1")))
        .add(conn("c", "/", Map.of(BrokerConnections.WORKER_PROPERTY, "w1")))
        .add("not an object")
        .add(new JsonObject().put("vhost", "/").put("client_properties", new JsonObject(Map.copyOf(BrokerConnections.workerProperties("w1", "inspection")))));
    assertEquals(List.of(), BrokerConnections.ofWorker(listed, "w1", "inspection", "/"));
  }

  @Test
  void aListWithoutAnyClientPropertiesIsReportedAsHidden() {
    // what RabbitMQ 3.10 answers with management_agent.disable_metrics_collector = true: names, no properties
    JsonArray hidden = new JsonArray()
        .add(new JsonObject().put("name", "127.0.0.1:50001 -> 127.0.0.1:5672").put("vhost", "/"))
        .add(new JsonObject().put("name", "127.0.0.1:50002 -> 127.0.0.1:5672").put("vhost", "/"));
    assertTrue(BrokerConnections.propertiesHidden(hidden));
    assertEquals(List.of(), BrokerConnections.ofWorker(hidden, "w1", "inspection", "/"));
    // one connection with properties (any client's) shows they are listed: the others are simply not ours
    JsonArray shown = hidden.copy().add(conn("c", "/", Map.of("product", "RabbitMQ")));
    assertFalse(BrokerConnections.propertiesHidden(shown));
    assertFalse(BrokerConnections.propertiesHidden(new JsonArray()));
    assertFalse(BrokerConnections.propertiesHidden(null));
    assertFalse(BrokerConnections.propertiesHidden(new JsonArray().add("not an object")));
  }

  @Test
  void anOverviewWithStatisticsDisabledIsReported() {
    // GET /api/overview of RabbitMQ 3.10.8, trimmed: "disable_stats" is false by default and true with
    // management_agent.disable_metrics_collector = true or management.disable_stats = true (each checked 2026-12-04 on this
    // machine's broker: both also listed 3 connections with name and vhost only)
    JsonObject on = new JsonObject().put("rabbitmq_version", "3.10.8").put("disable_stats", false).put("enable_queue_totals", false);
    JsonObject off = on.copy().put("disable_stats", true);
    assertFalse(BrokerConnections.statsDisabled(on));
    assertTrue(BrokerConnections.statsDisabled(off));
    // an older broker without the field, a missing body, or a field of another type: nothing to tell
    assertFalse(BrokerConnections.statsDisabled(new JsonObject().put("rabbitmq_version", "3.8.0")));
    assertFalse(BrokerConnections.statsDisabled(null));
    assertFalse(BrokerConnections.statsDisabled(new JsonObject().put("disable_stats", "true")));
  }

  @Test
  void nothingListedMeansNothingToClose() {
    assertEquals(List.of(), BrokerConnections.ofWorker(null, "w1", "inspection", "/"));
    assertEquals(List.of(), BrokerConnections.ofWorker(new JsonArray(), "w1", "inspection", "/"));
  }
}
