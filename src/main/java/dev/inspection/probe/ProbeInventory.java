package dev.inspection.probe;

import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import dev.inspection.inventory.Device;
import dev.inspection.inventory.Inventory;
import dev.inspection.metrics.Metrics;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A probe's device list: simulated devices, the {@code probe.inventory.file}, and the probe group's devices pulled
 * page by page from the scheduler ({@code probe.inventory.url}), cached on disk with their plan version so a restart
 * inspects the last known list until the scheduler answers. Puts what it reads into the {@link ProbeSchedule}.
 */
final class ProbeInventory {
  private static final Logger log = LoggerFactory.getLogger(ProbeInventory.class);

  private final Vertx vertx;
  private final Config config;
  private final Metrics metrics;
  private final Clock clock;
  private final ProbeSchedule schedule;
  private final WebClient web;
  private final Set<String> fromApi = new HashSet<>();
  private volatile long planVersion = 1;

  ProbeInventory(Vertx vertx, Config config, Metrics metrics, Clock clock, ProbeSchedule schedule, WebClient web) {
    this.vertx = vertx;
    this.config = config;
    this.metrics = metrics;
    this.clock = clock;
    this.schedule = schedule;
    this.web = web;
  }

  /** Simulated devices, the inventory file, and the cached pulled list until the scheduler answers; then a pull. */
  Future<Integer> load() {
    String group = config.get(Keys.PROBE_GROUP);
    long interval = config.getLong(Keys.PROBE_INTERVAL_MS);
    int sim = config.getInt(Keys.PROBE_SIM_DEVICES);
    int flapPct = config.getInt(Keys.PROBE_SIM_FLAP_PCT);
    String file = config.get(Keys.PROBE_INVENTORY_FILE);
    return vertx.executeBlocking(() -> {
      List<Device> all = new ArrayList<>(Inventory.simulated(sim, group, interval, flapPct));
      if (!file.isBlank()) all.addAll(Inventory.readJsonLines(Path.of(file), group, interval));
      Path cache = inventoryCache();
      if (!config.get(Keys.PROBE_INVENTORY_URL).isBlank() && Files.exists(cache)) {
        List<Device> cached = Inventory.readJsonLines(cache, group, interval);
        cached.forEach(d -> fromApi.add(d.deviceId()));
        all.addAll(cached);
        log.info("loaded the cached inventory {} until the scheduler answers", cache);
        Path plan = planCache();
        if (Files.exists(plan)) planVersion = Long.parseLong(Files.readString(plan).trim());
      }
      return all;
    }, false).map(list -> {
      long now = clock.millis();
      for (Device d : list) schedule.put(d, now);
      if (!config.get(Keys.PROBE_INVENTORY_URL).isBlank()) pull();
      return list.size();
    });
  }

  private Path inventoryCache() {
    return Path.of(config.get(Keys.DATA_DIR), "inventory-" + config.get(Keys.PROBE_GROUP).replaceAll("[^A-Za-z0-9._-]", "_") + ".jsonl");
  }

  /** The plan version of the cached inventory, beside it. */
  private Path planCache() {
    return Path.of(config.get(Keys.DATA_DIR), "inventory-" + config.get(Keys.PROBE_GROUP).replaceAll("[^A-Za-z0-9._-]", "_") + ".plan");
  }

  long planVersion() {
    return planVersion;
  }

  /** Pulls this group's devices page by page from the scheduler; keeps inspecting from the cache if it fails. */
  void pull() {
    String base = config.get(Keys.PROBE_INVENTORY_URL).replaceAll("/+$", "");
    String group = config.get(Keys.PROBE_GROUP);
    List<Device> got = new ArrayList<>();
    AtomicLong plan = new AtomicLong(-1);
    pullPage(base, group, "", got, plan).compose(v -> {
      long now = clock.millis();
      Set<String> seen = new HashSet<>();
      for (Device d : got) {
        seen.add(d.deviceId());
        Device old = schedule.device(d.deviceId());
        if (old == null || !old.equals(d)) schedule.put(d, now);
      }
      // devices the scheduler no longer lists for this group stop being inspected
      for (String id : fromApi) if (!seen.contains(id)) schedule.remove(id);
      fromApi.clear();
      fromApi.addAll(seen);
      StringBuilder sb = new StringBuilder();
      for (Device d : got) sb.append(d.toJson().encode()).append('\n');
      if (plan.get() > 0) planVersion = plan.get();
      return vertx.fileSystem().writeFile(inventoryCache().toString(), Buffer.buffer(sb.toString()))
          .compose(w -> vertx.fileSystem().writeFile(planCache().toString(), Buffer.buffer(Long.toString(planVersion))));
    }).onFailure(e -> log.warn("cannot pull the inventory from {} ({}); inspecting from the cached list", base, e.getMessage()));
  }

  /** {@code plan}: the plan version the first page names (read before its devices: they are at least that new). */
  private Future<Void> pullPage(String base, String group, String after, List<Device> got, AtomicLong plan) {
    return web.getAbs(base + "/api/v1/probe/inventory").bearerTokenAuthentication(config.get(Keys.PROBE_API_TOKEN))
        .addQueryParam("group", group).addQueryParam("after", after).addQueryParam("limit", "5000").timeout(10_000).send()
        .compose(resp -> {
          if (resp.statusCode() != 200) return Future.failedFuture("HTTP " + resp.statusCode() + ": " + resp.bodyAsString());
          JsonObject body = resp.bodyAsJsonObject();
          JsonArray devs = body.getJsonArray("devices", new JsonArray());
          if (after.isEmpty()) plan.set(body.getLong("plan_version", 1L));
          long interval = config.getLong(Keys.PROBE_INTERVAL_MS);
          for (int i = 0; i < devs.size(); i++) {
            try {
              got.add(Device.fromJson(devs.getJsonObject(i), group, interval));
            } catch (RuntimeException bad) {
              // one device the probe cannot run never stops the group's pull: it is left out, the rest inspected
              metrics.registry().counter("probe_inventory_refused_total").increment();
              log.warn("inventory: device {} left out: {}", devs.getValue(i) instanceof JsonObject o ? o.getValue("device_id") : i, bad.getMessage());
            }
          }
          String next = body.getString("next_after");
          return next == null ? Future.succeededFuture() : pullPage(base, group, next, got, plan);
        });
  }

}
