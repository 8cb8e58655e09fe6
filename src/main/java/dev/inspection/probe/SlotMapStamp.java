package dev.inspection.probe;

import dev.inspection.messaging.SlotHash;
import dev.inspection.outbox.CheckResult;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The slot map version a probe stamps its results with, and the slot count it hashes devices by (seed 000
 * §3.4, issue 14 item 3). It follows the scheduler's {@code stamp} ({@code GET /api/v1/probe/slot-map}: the
 * newest version the leader has switched) from this process's own scheduler ({@code --role=all}) or from
 * {@code probe.inventory.url}, every {@code probe.slot.map.refresh.ms}; it only ever moves forward. A probe that
 * reaches no scheduler keeps what it has (at start: version 1 with {@code slots.total}); after a reshard's grace
 * window its results of the old version are dead-lettered as {@code stale_slot_map}, and the README says so.
 */
final class SlotMapStamp {
  private static final Logger log = LoggerFactory.getLogger(SlotMapStamp.class);

  /** A version and its slot count. */
  record Stamp(long version, int slots) {}

  private final String probeId;
  private volatile Stamp current;
  private long timer = -1;

  SlotMapStamp(String probeId, int configuredSlots) {
    this.probeId = probeId;
    this.current = new Stamp(1, configuredSlots);
  }

  Stamp current() {
    return current;
  }

  /** {@code r} hashed and stamped with the version in use: its slot and {@code slot_map_version}. */
  CheckResult stamped(CheckResult r) {
    Stamp s = current;
    int slot = SlotHash.slotOf(r.deviceId(), s.slots());
    if (slot == r.slot() && s.version() == r.slotMapVersion()) return r;
    return new CheckResult(r.deviceId(), slot, r.priority(), r.collectedAt(), r.resourceVersion(), r.planVersion(), s.version(), r.payload(),
        r.devicePriority());
  }

  /** Pure: the stamp after reading {@code map} (a {@code /probe/slot-map} answer): a newer switched version, else {@code now}. */
  static Stamp next(Stamp now, JsonObject map) {
    JsonObject s = map == null ? null : map.getJsonObject("stamp");
    if (s == null || !(s.getValue("version") instanceof Number v) || !(s.getValue("slots") instanceof Number n)) return now;
    if (v.longValue() <= now.version() || n.intValue() < 1) return now;
    return new Stamp(v.longValue(), n.intValue());
  }

  /** Takes what a scheduler said; true when the probe switched. */
  boolean heard(JsonObject map, String via) {
    Stamp before = current;
    Stamp after = next(before, map);
    if (after == before) return false;
    current = after;
    log.info("probe {}: slot map version {} ({} slots) from now on, was version {} ({} slots); heard via {}", probeId, after.version(),
        after.slots(), before.version(), before.slots(), via);
    return true;
  }

  /** Follows {@code local} (this process's scheduler) or the scheduler at {@code base}; neither: keeps what it has. */
  void start(Vertx vertx, WebClient web, Supplier<Future<JsonObject>> local, String base, String token, long everyMs) {
    String url = base.replaceAll("/+$", "") + "/api/v1/probe/slot-map";
    if (local != null) {
      timer = vertx.setPeriodic(0, everyMs, t -> local.get().onSuccess(m -> heard(m, "its own scheduler"))
          .onFailure(e -> log.debug("cannot read the slot map of this node's scheduler: {}", e.getMessage())));
    } else if (!base.isBlank()) {
      timer = vertx.setPeriodic(0, everyMs, t -> web.getAbs(url).bearerTokenAuthentication(token).timeout(5_000).send()
          .onSuccess(resp -> {
            if (resp.statusCode() == 200) heard(resp.bodyAsJsonObject(), url);
          })
          .onFailure(e -> log.debug("cannot read the slot map at {}: {}", url, e.getMessage())));
    }
  }

  void stop(Vertx vertx) {
    if (timer >= 0) vertx.cancelTimer(timer);
  }
}
