package dev.inspection.scheduler;

import dev.inspection.inventory.CheckSpec;
import dev.inspection.inventory.Device;
import dev.inspection.inventory.TargetPolicy;
import dev.inspection.state.DerivedJson;
import dev.inspection.state.DerivedState;
import dev.inspection.state.PayloadProfiles;
import dev.inspection.store.Db;
import dev.inspection.store.Rows;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The device inventory in PostgreSQL: bulk import, paged reads for probes, one device's status. */
public final class DeviceStore {
  static final String NEXT_VERSION = "SELECT nextval('resource_version_seq')";
  static final String UPSERT = """
      INSERT INTO device_resource (device_id, priority, probe_group, check_type, check_spec, interval_ms, payload_profile, resource_version, updated_at)
      SELECT d, p, g, t, s::jsonb, i, pp, $8, now()
      FROM unnest($1::varchar[], $2::smallint[], $3::varchar[], $4::varchar[], $5::text[], $6::int[], $7::varchar[]) AS x(d, p, g, t, s, i, pp)
      ON CONFLICT (device_id) DO UPDATE SET priority = EXCLUDED.priority, probe_group = EXCLUDED.probe_group,
        check_type = EXCLUDED.check_type, check_spec = EXCLUDED.check_spec, interval_ms = EXCLUDED.interval_ms,
        payload_profile = EXCLUDED.payload_profile, resource_version = EXCLUDED.resource_version, enabled = true, updated_at = now()""";
  static final String PAGE = """
      SELECT device_id, priority, probe_group, check_type, check_spec, interval_ms, payload_profile, resource_version
      FROM device_resource WHERE probe_group = $1 AND enabled AND device_id > $2 ORDER BY device_id LIMIT $3""";
  static final String CURRENT = """
      SELECT device_id, slot_id, seq, cycle_id, collected_at, writer_epoch, message_id, status_payload, derived_snapshot::text, updated_at
      FROM device_status_current WHERE device_id = $1""";
  /** A device's history, newest first: read through the history key (V015 left history no other index). */
  public static final String HISTORY = """
      SELECT cycle_id, seq, collected_at, status_payload FROM device_status_history WHERE device_id = $1
      ORDER BY cycle_id DESC, seq DESC LIMIT $2""";
  /** The groups devices are in before an import moves them: those plans change too. */
  static final String GROUPS_OF = "SELECT DISTINCT probe_group FROM device_resource WHERE device_id = ANY($1::varchar[])";
  static final String RESOURCE = """
      SELECT device_id, priority, probe_group, check_type, check_spec, interval_ms, payload_profile, resource_version
      FROM device_resource WHERE device_id = $1""";

  private final Pool pool;

  public DeviceStore(Pool pool) {
    this.pool = pool;
  }

  /**
   * Upserts the devices in chunks of 1000 inside one transaction and bumps the plan version of every group
   * they are in or leave ({@link PlanVersions}); returns the new resource version.
   */
  public Future<Long> importDevices(List<Device> devices) {
    return Db.inTransaction(pool, conn -> conn.query(NEXT_VERSION).execute().compose(rs -> {
      long version = rs.iterator().next().getLong(0);
      Set<String> groups = new HashSet<>();
      Future<Void> chain = Future.succeededFuture();
      for (int from = 0; from < devices.size(); from += 1000) {
        List<Device> chunk = devices.subList(from, Math.min(devices.size(), from + 1000));
        chunk.forEach(d -> groups.add(d.probeGroup()));
        chain = chain.compose(v -> conn.preparedQuery(GROUPS_OF).execute(Tuple.tuple().addArrayOfString(chunk.stream().map(Device::deviceId).toArray(String[]::new))))
            .compose(rows -> {
              rows.forEach(r -> groups.add(r.getString(0)));
              return conn.preparedQuery(UPSERT).execute(tuple(chunk, version)).<Void>mapEmpty();
            });
      }
      return chain.compose(v -> PlanVersions.bump(conn, groups)).map(version);
    }));
  }

  private static Tuple tuple(List<Device> chunk, long version) {
    int n = chunk.size();
    String[] id = new String[n];
    Short[] prio = new Short[n];
    String[] group = new String[n];
    String[] type = new String[n];
    String[] spec = new String[n];
    Integer[] interval = new Integer[n];
    String[] profile = new String[n];
    for (int i = 0; i < n; i++) {
      Device d = chunk.get(i);
      id[i] = d.deviceId();
      prio[i] = (short) d.priority();
      group[i] = d.probeGroup();
      type[i] = d.checkType();
      spec[i] = d.checkSpec().encode();
      interval[i] = (int) Math.min(Integer.MAX_VALUE, d.intervalMs());
      profile[i] = d.payloadProfile();
    }
    return Tuple.tuple().addArrayOfString(id).addArrayOfShort(prio).addArrayOfString(group).addArrayOfString(type)
        .addArrayOfString(spec).addArrayOfInteger(interval).addArrayOfString(profile).addLong(version);
  }

  /**
   * One page of a group's devices with the group's plan version, read first: the devices are at least as
   * new as the plan version a probe stamps for them.
   */
  public Future<JsonObject> page(String group, String after, int limit) {
    return PlanVersions.read(pool, group).compose(plan -> pool.preparedQuery(PAGE).execute(Tuple.of(group, after, limit + 1)).map(rows -> {
      JsonArray out = new JsonArray();
      String last = null;
      long maxVersion = 0;
      int i = 0;
      boolean more = false;
      for (Row r : rows) {
        if (i++ == limit) {
          more = true;
          break;
        }
        JsonObject d = device(r);
        maxVersion = Math.max(maxVersion, d.getLong("resource_version"));
        last = d.getString("device_id");
        out.add(d);
      }
      return new JsonObject().put("devices", out).put("next_after", more ? last : null).put("resource_version", maxVersion)
          .put("plan_version", plan);
    }));
  }

  private static JsonObject device(Row r) {
    return new JsonObject().put("device_id", r.getString(0)).put("priority", (int) r.getShort(1)).put("probe_group", r.getString(2))
        .put("check_type", r.getString(3)).put("check_spec", r.getJsonObject(4)).put("interval_ms", r.getInteger(5))
        .put("payload_profile", r.getString(6)).put("resource_version", r.getLong(7));
  }

  /**
   * A stored derived snapshot as the API shows it, whatever layout the worker wrote it in: its members named in full (the
   * first layout, {@link DerivedState#toJson()}); null for none; one that cannot be read shows why ({@code unreadable})
   * and its text ({@code stored}).
   */
  static JsonObject derived(String snapshot) {
    if (snapshot == null) return null;
    try {
      DerivedState s = DerivedJson.decode(snapshot);
      return s == null ? null : s.toJson();
    } catch (IllegalArgumentException e) {
      return new JsonObject().put("unreadable", e.getMessage()).put("stored", snapshot);
    }
  }

  /** A device's inventory entry, newest status and recent history; null when the id is unknown everywhere. */
  public Future<JsonObject> detail(String deviceId, int historyRows) {
    Future<JsonObject> res = pool.preparedQuery(RESOURCE).execute(Tuple.of(deviceId)).map(rows -> rows.size() == 0 ? null : device(rows.iterator().next()));
    Future<JsonObject> cur = pool.preparedQuery(CURRENT).execute(Tuple.of(deviceId)).map(rows -> {
      if (rows.size() == 0) return null;
      Row r = rows.iterator().next();
      return new JsonObject().put("slot_id", (int) r.getShort(1)).put("seq", r.getLong(2)).put("cycle_id", r.getLong(3))
          .put("collected_at", r.getOffsetDateTime(4).toString()).put("writer_epoch", r.getLong(5)).put("message_id", r.getString(6))
          .put("status", r.getJsonObject(7)).put("derived", derived(r.getString(8))).put("updated_at", r.getOffsetDateTime(9).toString());
    });
    Future<JsonArray> hist = pool.preparedQuery(HISTORY).execute(Tuple.of(deviceId, historyRows)).map(rows -> {
      JsonArray a = new JsonArray();
      for (Row r : rows) {
        a.add(new JsonObject().put("cycle_id", r.getLong(0)).put("seq", r.getLong(1)).put("collected_at", r.getOffsetDateTime(2).toString())
            .put("status", r.getJsonObject(3)));
      }
      return a;
    });
    return Future.all(res, cur, hist).map(v -> {
      if (res.result() == null && cur.result() == null) return null;
      return new JsonObject().put("device_id", deviceId).put("inventory", res.result()).put("current", cur.result()).put("history", hist.result());
    });
  }

  /** Every slot's lease, for operators. */
  public Future<JsonArray> slots() {
    return pool.query("SELECT slot_id, owner_worker_id, lease_epoch, state, lease_until, target_owner FROM slot_lease ORDER BY slot_id").execute().map(rows -> {
      JsonArray a = new JsonArray();
      for (Row r : rows) {
        a.add(new JsonObject().put("slot_id", (int) r.getShort(0)).put("owner", r.getString(1)).put("epoch", r.getLong(2))
            .put("state", r.getString(3)).put("lease_until", Rows.iso(r, 4))
            .put("target", r.getString(5)));
      }
      return a;
    });
  }

  static final String SEARCH = """
      SELECT c.device_id, r.priority, r.probe_group, r.check_type, coalesce(r.payload_profile, c.payload_profile), c.slot_id,
             c.status_payload->>'status', c.collected_at
      FROM device_status_current c LEFT JOIN device_resource r USING (device_id)
      WHERE c.device_id LIKE $1 ORDER BY c.device_id LIMIT $2""";
  static final String SEARCH_INVENTORY = """
      SELECT device_id, priority, probe_group, check_type, payload_profile FROM device_resource
      WHERE device_id LIKE $1 AND device_id NOT IN (SELECT device_id FROM device_status_current WHERE device_id LIKE $1)
      ORDER BY device_id LIMIT $2""";
  /** The device's group before a change (locked until the change commits): that plan changes too. */
  static final String GROUP_FOR_UPDATE = "SELECT probe_group, check_type FROM device_resource WHERE device_id = $1 FOR UPDATE";
  static final String UPDATE = """
      UPDATE device_resource SET priority = coalesce($2, priority), probe_group = coalesce($3, probe_group), interval_ms = coalesce($4, interval_ms),
        payload_profile = coalesce($5, payload_profile), enabled = coalesce($6, enabled), check_spec = coalesce($7::jsonb, check_spec),
        resource_version = nextval('resource_version_seq'), updated_at = now()
      WHERE device_id = $1 RETURNING resource_version, probe_group""";

  /** Devices whose id starts with {@code prefix}: those with results first, then inventory entries without any yet. */
  public Future<JsonArray> search(String prefix, int limit) {
    String like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%";
    return pool.preparedQuery(SEARCH).execute(Tuple.of(like, limit)).compose(rows -> {
      JsonArray a = new JsonArray();
      for (Row r : rows) {
        a.add(new JsonObject().put("device_id", r.getString(0)).put("priority", r.getValue(1)).put("probe_group", r.getString(2))
            .put("check_type", r.getString(3)).put("payload_profile", r.getString(4)).put("slot_id", (int) r.getShort(5))
            .put("status", r.getString(6)).put("collected_at", r.getOffsetDateTime(7).toString()));
      }
      if (a.size() >= limit) return Future.succeededFuture(a);
      return pool.preparedQuery(SEARCH_INVENTORY).execute(Tuple.of(like, limit - a.size())).map(inv -> {
        for (Row r : inv) {
          a.add(new JsonObject().put("device_id", r.getString(0)).put("priority", (int) r.getShort(1)).put("probe_group", r.getString(2))
              .put("check_type", r.getString(3)).put("payload_profile", r.getString(4)));
        }
        return a;
      });
    });
  }

  /**
   * Changes inventory fields of one device (null = unchanged); the new resource version tells probes to
   * pull it again. Completes with null when the device is not in the inventory.
   */
  public Future<Long> update(String id, JsonObject patch) {
    Integer prio = patch.getInteger("priority");
    if (prio != null && (prio < 1 || prio > 3)) return Future.failedFuture(new IllegalArgumentException("priority must be 1, 2 or 3"));
    Long interval = patch.getLong("interval_ms");
    if (interval != null && interval < 100) return Future.failedFuture(new IllegalArgumentException("interval_ms must be at least 100"));
    String profile = patch.getString("payload_profile");
    if (profile != null) PayloadProfiles.byName(profile);
    for (String k : patch.fieldNames()) {
      if (!Set.of("priority", "probe_group", "interval_ms", "payload_profile", "enabled", "check_spec").contains(k)) {
        return Future.failedFuture(new IllegalArgumentException("field '" + k + "' cannot be changed here (priority, probe_group, interval_ms,"
            + " payload_profile, enabled, check_spec can; import the device again to change its check type)"));
      }
    }
    Object rawSpec = patch.getValue("check_spec");
    if (rawSpec != null && !(rawSpec instanceof JsonObject)) return Future.failedFuture(new IllegalArgumentException("check_spec must be a JSON object"));
    JsonObject spec = (JsonObject) rawSpec;
    Tuple args = Tuple.tuple().addString(id).addValue(prio == null ? null : prio.shortValue())
        .addString(patch.getString("probe_group")).addValue(interval == null ? null : interval.intValue()).addString(profile)
        .addValue(patch.getBoolean("enabled")).addValue(spec); // a JsonObject: the client sends it as jsonb (a String would become a JSON string)
    return Db.inTransaction(pool, conn -> conn.preparedQuery(GROUP_FOR_UPDATE).execute(Tuple.of(id)).compose(before -> {
      if (before.size() == 0) return Future.succeededFuture(null);
      Row b = before.iterator().next();
      if (spec != null) CheckSpec.validate(b.getString(1), spec); // a new spec must suit the device's check type (naming the field)
      String oldGroup = b.getString(0);
      return conn.preparedQuery(UPDATE).execute(args).compose(rows -> {
        Row r = rows.iterator().next();
        return PlanVersions.bump(conn, new HashSet<>(List.of(oldGroup, r.getString(1)))).map(r.getLong(0));
      });
    }));
  }

  /** Parses an import body: a JSON array or JSON lines. Invalid entries are reported, valid ones kept. */
  public static List<Device> parseImport(String body, String defaultGroup, long defaultInterval, JsonArray rejected) {
    return parseImport(body, defaultGroup, defaultInterval, rejected, TargetPolicy.open());
  }

  /** As above; a target written as an address that {@code policy} refuses is rejected too (naming the range). */
  public static List<Device> parseImport(String body, String defaultGroup, long defaultInterval, JsonArray rejected, TargetPolicy policy) {
    List<Device> out = new ArrayList<>();
    String trimmed = body.trim();
    List<Object> items = new ArrayList<>();
    if (trimmed.startsWith("[")) {
      new JsonArray(trimmed).forEach(items::add);
    } else {
      for (String line : trimmed.split("\n")) {
        if (line.isBlank()) continue;
        try {
          items.add(new JsonObject(line));
        } catch (RuntimeException e) {
          items.add(line);
        }
      }
    }
    for (int i = 0; i < items.size(); i++) {
      Object item = items.get(i);
      try {
        if (!(item instanceof JsonObject j)) throw new IllegalArgumentException("entry is not a JSON object");
        Device d = Device.fromJson(j, defaultGroup, defaultInterval);
        PayloadProfiles.byName(d.payloadProfile()); // an unknown profile is refused here, naming the known ones
        String refused = policy.refusalOfSpec(d.checkSpec());
        if (refused != null) throw new IllegalArgumentException(refused);
        out.add(d);
      } catch (IllegalArgumentException | ClassCastException e) {
        rejected.add(new JsonObject().put("index", i).put("error", e.getMessage()));
      }
    }
    return out;
  }
}
