package dev.inspection.worker;

import dev.inspection.messaging.Priority;
import dev.inspection.state.PayloadProfile;
import dev.inspection.state.PayloadProfiles;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the worker needs to know about a device beyond its messages: its priority (which alert rules
 * apply) and its payload profile (how its status fields merge, D5). Read from the inventory
 * ({@code device_resource}) the first time a device is seen and kept for {@code ttlMs}; a device missing
 * from the inventory (e.g. simulated) gets the priority of the queue its result came on (high → 1, normal → 2)
 * and the default profile. A slot's take-up reads its devices' listings with their derived state
 * ({@link SnapshotLoader}) and hands them to {@link #listed}, so a taken-over slot's first batch plans without a
 * lookup of its own (issue 14: at a failover that lookup was one more query per slot, on the commit pool, in the
 * path to the slot's first commit).
 *
 * <p>A listing older than {@code ttlMs} is still answered at once, and read again in the background ({@link #refresh}):
 * only a device never seen waits for the database. Until 2026-12-07 an old listing was looked up before its batch could
 * plan, and a worker's listings all date from its slots' take-up, so ten minutes after it a worker of a million devices
 * looked up every device it checked for one whole interval, a query in front of nearly every slot's commit.
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
    public static Info fallback(Priority queue) {
      return new Info(queue.devicePriority, PayloadProfiles.DEFAULT, false);
    }
  }

  /** {@code info} null: the inventory does not list the device (its priority comes from its queue at each lookup). */
  private record Cached(Info info, long at) {}

  /** Most listings one background read asks for. */
  static final int REFRESH_MAX = 5_000;
  /** After a background read failed, the next waits this long. */
  static final long REFRESH_RETRY_MS = 5_000;

  private final Pool pool;
  private final long ttlMs;
  private final int maxEntries;
  private final Clock clock;
  private final Map<String, Cached> cache;
  /** Devices answered with a listing older than ttlMs, to be read again, oldest first. */
  private final Set<String> due = new LinkedHashSet<>();
  private boolean refreshing;
  private long refreshNotBeforeMs;
  // written on the directory's context only, read by the metrics' scrape
  private volatile long firstReads;
  private volatile long refreshed;
  private volatile long refreshFailed;

  public DeviceDirectory(Pool pool, long ttlMs, int maxEntries) {
    this(pool, ttlMs, maxEntries, Clock.systemUTC());
  }

  public DeviceDirectory(Pool pool, long ttlMs, int maxEntries, Clock clock) {
    this.pool = pool;
    this.ttlMs = ttlMs;
    this.maxEntries = maxEntries;
    this.clock = clock;
    // sized for maxEntries from the start (the table is allocated at the first entry: 8 MB for a million): a takeover of
    // a million devices grew it from 1,024 by doubling, and each of the last doublings rehashed up to 786,432 entries
    // on the worker's event loop, inside one page of the load (45-115 ms in a flight recording of the million run's lone
    // worker, issue 11)
    this.cache = new LinkedHashMap<>(HashSizes.capacityFor(maxEntries), 0.75f, true) {
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

  /**
   * Infos of the given devices; {@code queue} gives the fallback priority of devices the inventory does not list. Only
   * devices never seen (or evicted) wait for the database; a listing older than the TTL is answered as it is and read
   * again in the background.
   */
  public Future<Map<String, Info>> lookup(Collection<String> ids, Map<String, Priority> queue) {
    long now = clock.millis();
    Map<String, Info> out = new HashMap<>(HashSizes.capacityFor(ids.size()));
    List<String> missing = new ArrayList<>();
    for (String id : ids) {
      Cached c = cache.get(id);
      if (c == null) {
        missing.add(id);
        continue;
      }
      out.put(id, c.info != null ? c.info : Info.fallback(queue.getOrDefault(id, Priority.NORMAL)));
      if (now - c.at >= ttlMs) due.add(id);
    }
    refresh();
    if (missing.isEmpty()) return Future.succeededFuture(out);
    firstReads += missing.size();
    return read(missing, now).map(found -> {
      for (String id : missing) {
        Info i = found.get(id);
        out.put(id, i != null ? i : Info.fallback(queue.getOrDefault(id, Priority.NORMAL)));
      }
      return out;
    });
  }

  /** Devices whose listing was read before their batch could plan (never seen, or evicted), since the start. */
  public long firstReads() {
    return firstReads;
  }

  /** Listings read again in the background since the start. */
  public long refreshed() {
    return refreshed;
  }

  /** Listings whose background read failed (each is tried again), since the start. */
  public long refreshFailed() {
    return refreshFailed;
  }

  /**
   * Reads up to {@link #REFRESH_MAX} due listings again, unless a read is under way or the last one failed less than
   * {@link #REFRESH_RETRY_MS} ago; until it answers, lookups keep answering the old listings. Runs on the caller's
   * context, as every other call here.
   */
  private void refresh() {
    long now = clock.millis();
    if (refreshing || due.isEmpty() || now < refreshNotBeforeMs) return;
    List<String> ids = new ArrayList<>(Math.min(due.size(), REFRESH_MAX));
    for (Iterator<String> it = due.iterator(); it.hasNext() && ids.size() < REFRESH_MAX; ) {
      String id = it.next();
      it.remove();
      Cached c = cache.get(id);
      if (c == null || now - c.at >= ttlMs) ids.add(id); // else read meanwhile (asked again while its read was under way)
    }
    if (ids.isEmpty()) return;
    refreshing = true;
    read(ids, now).onComplete(ar -> {
      refreshing = false;
      if (ar.succeeded()) {
        refreshed += ids.size();
        refresh();
      } else {
        refreshFailed += ids.size();
        due.addAll(ids);
        refreshNotBeforeMs = clock.millis() + REFRESH_RETRY_MS;
        log.warn("cannot read the inventory listings of {} devices again ({}); their results are planned with the listings read before,"
            + " next try in {} ms", ids.size(), ar.cause().getMessage(), REFRESH_RETRY_MS);
      }
    });
  }

  /** Reads the listings of {@code ids} and keeps them, read at {@code at}; the future holds the listed ones. */
  private Future<Map<String, Info>> read(List<String> ids, long at) {
    return pool.preparedQuery(LOOKUP).execute(Tuple.of((Object) ids.toArray(String[]::new))).map(rows -> {
      Map<String, Info> found = new HashMap<>();
      for (Row r : rows) found.put(r.getString(0), listing(r.getString(0), r.getShort(1), r.getString(2)));
      for (String id : ids) cache.put(id, new Cached(found.get(id), at));
      return found;
    });
  }

  /**
   * What the inventory says of a device, read elsewhere (a slot's snapshot load): kept as a lookup's answer would be.
   * {@code priority} null: the inventory does not list it.
   */
  public void listed(String deviceId, Short priority, String profile) {
    cache.put(deviceId, new Cached(priority == null ? null : listing(deviceId, priority, profile), clock.millis()));
  }

  private static Info listing(String deviceId, short priority, String profileName) {
    PayloadProfile profile;
    try {
      profile = PayloadProfiles.byName(profileName);
    } catch (IllegalArgumentException e) {
      log.warn("device {}: {}; using the default profile", deviceId, e.getMessage());
      profile = PayloadProfiles.DEFAULT;
    }
    return new Info(priority, profile, true);
  }
}
