package dev.inspection.probe;

import dev.inspection.config.ConfigException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * D11 for probes, which never reach PostgreSQL: at start a probe with {@code probe.inventory.url} reads the
 * slot map in force from the scheduler and refuses to start (a {@link ConfigException}: exit code 2) when its
 * {@code slots.total} differs, since it would route every result to the wrong slot. An unreachable scheduler
 * does not stop a probe (it inspects from its cache): the check is skipped with a warning.
 */
final class SlotMapCheck {
  private static final Logger log = LoggerFactory.getLogger(SlotMapCheck.class);

  private SlotMapCheck() {}

  /** Pure: the refusal for a map in force of {@code inForce} slots (version {@code version}), or null when they agree. */
  static String refusal(int configured, int inForce, long version, String url) {
    if (configured == inForce) return null;
    return "slots.total is " + configured + " in this probe's configuration, but the slot map in force (version " + version + ", served by "
        + url + ") has " + inForce + " slots: set slots.total=" + inForce + " (INSPECT_SLOTS_TOTAL) for this probe; the map in the"
        + " database is the truth";
  }

  /** {@code heard}: the scheduler's answer, when it agrees (the probe's {@link SlotMapStamp} starts from it). */
  static Future<Void> check(WebClient web, String base, String token, int configured, Consumer<JsonObject> heard) {
    if (base.isBlank()) return Future.succeededFuture();
    String url = base.replaceAll("/+$", "") + "/api/v1/probe/slot-map";
    return web.getAbs(url).bearerTokenAuthentication(token).timeout(10_000).send().<Void>compose(resp -> {
      if (resp.statusCode() != 200) {
        log.warn("cannot check slots.total against the slot map: {} answered HTTP {}; starting with slots.total={}", url, resp.statusCode(), configured);
        return Future.succeededFuture();
      }
      JsonObject map = resp.bodyAsJsonObject();
      JsonObject current = map.getJsonObject("current");
      if (current == null) return Future.succeededFuture();
      String refused = refusal(configured, current.getInteger("slots"), current.getLong("version"), url);
      if (refused != null) return Future.failedFuture(new ConfigException(refused));
      heard.accept(map);
      return Future.succeededFuture();
    }).recover(e -> {
      if (e instanceof ConfigException) return Future.failedFuture(e);
      log.warn("cannot check slots.total against the slot map at {} ({}); starting with slots.total={}", url, e.getMessage(), configured);
      return Future.succeededFuture();
    });
  }
}
