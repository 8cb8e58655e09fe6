package dev.inspection.worker;

import dev.inspection.messaging.Priority;
import dev.inspection.state.PayloadProfile;
import dev.inspection.state.PayloadProfiles;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the worker needs to know about a device beyond its messages: its priority (which alert rules
 * apply) and its payload profile (how its status fields merge, D5). Read from the inventory
 * ({@code device_resource}) the first time a device is seen and kept for {@code ttlMs}; a device missing
 * from the inventory (e.g. simulated) gets the priority of its queue (high → 1, normal → 2) and the
 * default profile.
 */
public final class DeviceDirectory {
  private static final Logger log = LoggerFactory.getLogger(DeviceDirectory.class);
  static final String LOOKUP = "SELECT device_id, priority, payload_profile FROM device_resource WHERE device_id = ANY($1::varchar[])";
  static final String PROFILES = """
      INSERT INTO payload_profile (name, rules, default_rule, device_time_field) VALUES ($1, $2::jsonb, $3, $4)
      ON CONFLICT (name) DO UPDATE SET rules = EXCLUDED.rules, default_rule = EXCLUDED.default_rule,
        device_time_field = EXCLUDED.device_time_field""";

  /** A device's rules. {@code known}: listed in the inventory. */
  public record Info(int priority, PayloadProfile profile, boolean known) {
    static Info fallback(Priority queue) {
      return new Info(queue.devicePriority, PayloadProfiles.DEFAULT, false);
    }
  }

  private record Cached(Info info, long at) {}

  private final Pool pool;
  private final long ttlMs;
  private final int maxEntries;
  private final Map<String, Cached> cache;

  public DeviceDirectory(Pool pool, long ttlMs, int maxEntries) {
    this.pool = pool;
    this.ttlMs = ttlMs;
    this.maxEntries = maxEntries;
    this.cache = new LinkedHashMap<>(1024, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Cached> e) {
        return size() > DeviceDirectory.this.maxEntries;
      }
    };
  }

  /** Writes the code's payload profiles to {@code payload_profile}, where the SQL merge reads them. */
  public Future<Void> publishProfiles() {
    List<Future<?>> all = new ArrayList<>();
    for (PayloadProfile p : PayloadProfiles.all()) {
      all.add(pool.preparedQuery(PROFILES).execute(Tuple.of(p.name(), p.rulesJson(), p.defaultRule().sqlName(), p.deviceTimeField())));
    }
    return Future.all(all).mapEmpty();
  }

  /** Infos of the given devices; {@code queue} gives the fallback priority of devices the inventory does not list. */
  public Future<Map<String, Info>> lookup(Collection<String> ids, Map<String, Priority> queue) {
    long now = System.currentTimeMillis();
    Map<String, Info> out = new HashMap<>();
    List<String> missing = new ArrayList<>();
    for (String id : ids) {
      Cached c = cache.get(id);
      if (c != null && now - c.at < ttlMs) out.put(id, c.info);
      else missing.add(id);
    }
    if (missing.isEmpty()) return Future.succeededFuture(out);
    return pool.preparedQuery(LOOKUP).execute(Tuple.of((Object) missing.toArray(String[]::new))).map(rows -> {
      Map<String, Info> found = new HashMap<>();
      for (Row r : rows) {
        PayloadProfile profile;
        try {
          profile = PayloadProfiles.byName(r.getString(2));
        } catch (IllegalArgumentException e) {
          log.warn("device {}: {}; using the default profile", r.getString(0), e.getMessage());
          profile = PayloadProfiles.DEFAULT;
        }
        found.put(r.getString(0), new Info(r.getShort(1), profile, true));
      }
      for (String id : missing) {
        Info i = found.getOrDefault(id, Info.fallback(queue.getOrDefault(id, Priority.NORMAL)));
        cache.put(id, new Cached(i, now));
        out.put(id, i);
      }
      return out;
    });
  }
}
