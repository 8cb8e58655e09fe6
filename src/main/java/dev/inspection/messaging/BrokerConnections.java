package dev.inspection.messaging;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How a worker's AMQP connections are recognised on the broker, and which of the connections RabbitMQ's
 * management API lists belong to one worker (pure: no I/O). A worker names itself in two client
 * properties: its id and the installation (the topology prefix, so that two installations sharing a
 * broker — drills, tests — never fence each other's workers of the same id). The connection name
 * ({@code worker-<id>}) is for people reading the management UI; matching uses the properties only.
 */
public final class BrokerConnections {
  private BrokerConnections() {}

  /** Client property carrying the worker id. */
  public static final String WORKER_PROPERTY = "inspection_worker_id";
  /** Client property carrying the installation (topology prefix). */
  public static final String INSTALLATION_PROPERTY = "inspection_installation";

  /** The client properties a worker of {@code installation} adds to its connections. */
  public static Map<String, Object> workerProperties(String workerId, String installation) {
    return Map.of(WORKER_PROPERTY, workerId, INSTALLATION_PROPERTY, installation);
  }

  /**
   * Whether the management API's {@code GET /api/overview} says it keeps no statistics ({@code "disable_stats": true}):
   * RabbitMQ says so with {@code management_agent.disable_metrics_collector = true} or {@code management.disable_stats =
   * true}, and then lists connections without their {@code client_properties} ({@link #propertiesHidden}), so the
   * fence can find no worker's connection. False when the field is missing (an older broker: nothing to tell).
   */
  public static boolean statsDisabled(JsonObject overview) {
    return overview != null && Boolean.TRUE.equals(overview.getValue("disable_stats"));
  }

  /**
   * Whether the management API lists connections but none with its {@code client_properties}: RabbitMQ does so
   * with {@code management_agent.disable_metrics_collector = true}, and then {@link #ofWorker} can never find a
   * worker's connections. False for an empty or missing list (nothing to tell).
   */
  public static boolean propertiesHidden(JsonArray connections) {
    if (connections == null) return false;
    boolean any = false;
    for (Object o : connections) {
      if (!(o instanceof JsonObject c)) continue;
      if (c.getValue("client_properties") instanceof JsonObject) return false;
      any = true;
    }
    return any;
  }

  /**
   * Names (the management API's {@code name}, the key of {@code DELETE /api/connections/{name}}) of the
   * connections in {@code connections} (the body of {@code GET /api/connections}) that worker
   * {@code workerId} of {@code installation} opened on virtual host {@code vhost}. Entries without the
   * properties (other clients, workers older than this) are never matched.
   */
  public static List<String> ofWorker(JsonArray connections, String workerId, String installation, String vhost) {
    List<String> out = new ArrayList<>();
    if (connections == null) return out;
    for (Object o : connections) {
      if (!(o instanceof JsonObject c)) continue;
      Object props = c.getValue("client_properties");
      if (!(props instanceof JsonObject p)) continue;
      if (!workerId.equals(p.getValue(WORKER_PROPERTY)) || !installation.equals(p.getValue(INSTALLATION_PROPERTY))) continue;
      if (vhost != null && c.getValue("vhost") != null && !vhost.equals(c.getValue("vhost"))) continue;
      if (c.getValue("name") instanceof String name && !name.isEmpty()) out.add(name);
    }
    return out;
  }
}
