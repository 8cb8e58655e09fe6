package dev.inspection.config;

import java.io.IOException;
import java.io.Reader;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * The node's configuration: built-in defaults, then the {@code --config} file, then environment
 * variables ({@code INSPECT_*}), then {@code --key=value} flags. Any unknown key, in any of the
 * three sources, stops start-up with a message that names it.
 */
public final class Config {
  private final Map<String, String> values;

  private Config(Map<String, String> values) {
    this.values = Collections.unmodifiableMap(values);
  }

  /** Defaults only, with the given overrides (used by tests and embedders). */
  public static Config of(Map<String, String> overrides) {
    Map<String, String> v = defaults();
    overrides.forEach((key, value) -> put(v, key, value, "override"));
    return new Config(demoDefaults(v, overrides.keySet()));
  }

  /** Simulated devices a node in demo mode adds when probe.sim.devices is not given: the demo's fleet. */
  public static final String DEMO_SIM_DEVICES = "10000";

  /**
   * The demo's defaults, applied only with demo.mode=true to keys no source gave: outside demo mode a node
   * started without flags must not fill a real database with simulated devices.
   */
  private static Map<String, String> demoDefaults(Map<String, String> v, Set<String> given) {
    if (!v.get(Keys.DEMO_MODE.name()).trim().equals("true")) return v;
    if (!given.contains(Keys.PROBE_SIM_DEVICES.name())) v.put(Keys.PROBE_SIM_DEVICES.name(), DEMO_SIM_DEVICES);
    if (!given.contains(Keys.PROBE_SIM_FLAP_PCT.name())) v.put(Keys.PROBE_SIM_FLAP_PCT.name(), "1");
    if (!given.contains(Keys.PROBE_SIM_PUSH_ROOMS.name())) v.put(Keys.PROBE_SIM_PUSH_ROOMS.name(), "40");
    if (v.get(Keys.PROBE_INGEST_TOKENS.name()).isBlank() && !v.get(Keys.PROBE_SIM_PUSH_ROOMS.name()).trim().equals("0")) { // the rooms' push token
      byte[] b = new byte[16];
      new java.security.SecureRandom().nextBytes(b);
      v.put(Keys.PROBE_INGEST_TOKENS.name(), java.util.HexFormat.of().formatHex(b));
    }
    return v;
  }

  /** Parses command-line flags and the environment. {@code --help} is handled by the caller. */
  public static Config load(String[] args, Map<String, String> env) {
    Map<String, String> flags = new LinkedHashMap<>();
    String file = null;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (!a.startsWith("--")) {
        throw new ConfigException("unexpected argument '" + a + "': flags look like --key=value (see --help)");
      }
      String body = a.substring(2);
      String key;
      String value;
      int eq = body.indexOf('=');
      if (eq >= 0) {
        key = body.substring(0, eq);
        value = body.substring(eq + 1);
      } else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
        key = body;
        value = args[++i];
      } else {
        throw new ConfigException("flag --" + body + " needs a value: --" + body + "=VALUE (see --help)");
      }
      if (key.equals("config")) {
        file = value;
      } else {
        flags.put(key, value);
      }
    }
    Map<String, String> v = defaults();
    Set<String> given = new HashSet<>(flags.keySet());
    if (file != null) {
      Properties p = new Properties();
      Path path = Path.of(file);
      try (Reader r = Files.newBufferedReader(path)) {
        p.load(r);
      } catch (IOException e) {
        throw new ConfigException("cannot read config file " + path.toAbsolutePath() + ": " + e.getMessage());
      }
      for (String key : p.stringPropertyNames()) {
        put(v, key, p.getProperty(key).trim(), "config file " + file);
        given.add(key);
      }
    }
    for (Map.Entry<String, String> e : env.entrySet()) {
      if (!e.getKey().startsWith("INSPECT_")) continue;
      ConfigKey key = byEnv(e.getKey());
      if (key != null) {
        put(v, key.name(), e.getValue(), "environment variable " + e.getKey());
        given.add(key.name());
        continue;
      }
      // INSPECT_X_FILE=/path: key x's value is the file's content (Docker/Kubernetes secrets), never both
      String var = e.getKey();
      ConfigKey fileKey = var.endsWith("_FILE") ? byEnv(var.substring(0, var.length() - "_FILE".length())) : null;
      if (fileKey == null) {
        throw new ConfigException("unknown environment variable " + var
            + ": no configuration key matches it (see --help for the keys; unset it or fix the name)");
      }
      if (env.containsKey(fileKey.envName())) {
        throw new ConfigException("both " + fileKey.envName() + " and " + var + " are set: " + fileKey.name()
            + " comes from one of them; unset the other");
      }
      put(v, fileKey.name(), readValueFile(var, e.getValue()), "the file named by " + var);
      given.add(fileKey.name());
    }
    flags.forEach((key, value) -> put(v, key, value, "flag --" + key));
    return new Config(demoDefaults(v, given));
  }

  private static ConfigKey byEnv(String var) {
    return Keys.ALL.stream().filter(k -> k.envName().equals(var)).findFirst().orElse(null);
  }

  /** The content of the file an {@code INSPECT_X_FILE} variable names, without its trailing line break(s). */
  static String readValueFile(String var, String file) {
    if (file == null || file.isBlank()) throw new ConfigException(var + " is set but empty: give the path of the file holding the value, or unset it");
    try {
      String content = Files.readString(Path.of(file));
      int end = content.length();
      while (end > 0 && (content.charAt(end - 1) == '\n' || content.charAt(end - 1) == '\r')) end--;
      return content.substring(0, end);
    } catch (IOException | RuntimeException e) {
      throw new ConfigException("cannot read the file named by " + var + " (" + file + "): " + e.getClass().getSimpleName()
          + (e.getMessage() == null ? "" : " " + e.getMessage()) + "; make it readable by this user or unset " + var);
    }
  }

  private static Map<String, String> defaults() {
    Map<String, String> v = new LinkedHashMap<>();
    for (ConfigKey k : Keys.ALL) v.put(k.name(), k.defaultValue());
    return v;
  }

  private static void put(Map<String, String> v, String key, String value, String source) {
    ConfigKey k = Keys.BY_NAME.get(key);
    if (k == null && key.equals("pg.ssl")) {
      throw new ConfigException("pg.ssl in " + source + " was replaced by pg.ssl.mode: set pg.ssl.mode=verify-full and pg.tls.ca (see --help)");
    }
    if (k == null && key.equals("queue.max.bytes")) {
      throw new ConfigException("queue.max.bytes in " + source + " was replaced by broker.queue.budget.bytes, the total of all slot queues"
          + " (split with broker.queue.high.weight): e.g. the old per-queue value x 2 x slots.total (see --help)");
    }
    if (k == null) {
      throw new ConfigException("unknown configuration key '" + key + "' in " + source
          + ": see --help or conf/node.properties for the keys" + KeySuggestion.forUnknown(key));
    }
    validate(k, value, source);
    v.put(key, value);
  }

  private static void validate(ConfigKey k, String value, String source) {
    try {
      switch (k.type()) {
        case INT -> Integer.parseInt(value.trim());
        case LONG -> Long.parseLong(value.trim());
        case DOUBLE -> Double.parseDouble(value.trim());
        case BOOL -> {
          if (!value.trim().equals("true") && !value.trim().equals("false")) throw new NumberFormatException();
        }
        case STRING -> { }
      }
    } catch (NumberFormatException e) {
      throw new ConfigException("configuration key '" + k.name() + "' in " + source + " has value '" + value
          + "', which is not a valid " + k.type().name().toLowerCase() + " (" + k.help() + ")");
    }
    if (k == Keys.ROLE && Role.parse(value) == null) {
      throw new ConfigException("unknown role '" + value + "' in " + source + ": use one of probe, worker, scheduler, all");
    }
  }

  /** Checks that go across keys; each message names the key and the fix. */
  public static void validateAll(Config c) {
    if (c.getInt(Keys.SLOTS_TOTAL) < 1 || c.getInt(Keys.SLOTS_TOTAL) > 4096) {
      throw new ConfigException("slots.total must be between 1 and 4096 (got " + c.get(Keys.SLOTS_TOTAL) + ")");
    }
    if (c.getLong(Keys.RESHARD_EFFECTIVE_AFTER_MS) < 0 || c.getLong(Keys.RESHARD_WINDOW_END_MS) <= c.getLong(Keys.RESHARD_EFFECTIVE_AFTER_MS)) {
      throw new ConfigException("reshard.window.end.ms (" + c.get(Keys.RESHARD_WINDOW_END_MS) + ") must be more than reshard.effective.after.ms ("
          + c.get(Keys.RESHARD_EFFECTIVE_AFTER_MS) + "), which must not be negative: the grace window ends after the new map takes effect");
    }
    if (c.getInt(Keys.WORKER_BATCH_MAX) < 1) throw new ConfigException("worker.batch.max must be at least 1");
    if (c.getLong(Keys.WORKER_DIRECTORY_TTL_MS) < 1000) {
      throw new ConfigException("worker.directory.ttl.ms must be at least 1000 (got " + c.get(Keys.WORKER_DIRECTORY_TTL_MS) + ")");
    }
    if (c.getInt(Keys.WORKER_DIRECTORY_MAX_DEVICES) < 1) {
      throw new ConfigException("worker.directory.max.devices must be at least 1 (got " + c.get(Keys.WORKER_DIRECTORY_MAX_DEVICES) + ")");
    }
    for (ConfigKey k : List.of(Keys.WORKER_PREFETCH_HIGH, Keys.WORKER_PREFETCH_NORMAL, Keys.WORKER_PREFETCH_LOW, Keys.WORKER_LANE_WEIGHT_HIGH,
        Keys.QUEUE_LOW_MAX_LENGTH, Keys.WORKER_CONSUMER_OPEN_THREADS)) {
      if (c.getInt(k) < 1) throw new ConfigException(k.name() + " must be at least 1 (got " + c.get(k) + ")");
    }
    for (ConfigKey k : List.of(Keys.WORKER_LANE_WEIGHT_NORMAL, Keys.WORKER_LANE_WEIGHT_LOW, Keys.WORKER_GENERIC_PLAN_MAX_RESULTS)) {
      if (c.getInt(k) < 0) throw new ConfigException(k.name() + " must not be negative (got " + c.get(k) + ")");
    }
    if (c.getLong(Keys.PROBE_LOOK_GATHER_MS) < 0) throw new ConfigException("probe.look.gather.ms must not be negative (got " + c.get(Keys.PROBE_LOOK_GATHER_MS) + "); 0 checks each device at its due time");
    if (c.getLong(Keys.WORKER_LANE_STARVATION_MS) < 1) throw new ConfigException("worker.lane.starvation.ms must be at least 1 (got " + c.get(Keys.WORKER_LANE_STARVATION_MS) + ")");
    if (c.getLong(Keys.QUEUE_LOW_MAX_BYTES) < 1) throw new ConfigException("queue.low.max.bytes must be at least 1 (got " + c.get(Keys.QUEUE_LOW_MAX_BYTES) + ")");
    if (c.getLong(Keys.WORKER_MAX_FUTURE_SKEW_MS) < 0) throw new ConfigException("worker.max.future.skew.ms must not be negative");
    if (c.getLong(Keys.WORKER_DEGRADED_HISTORY_LOCK_TIMEOUT_MS) < 0) throw new ConfigException("worker.degraded.history.lock.timeout.ms must not be negative (got "
        + c.get(Keys.WORKER_DEGRADED_HISTORY_LOCK_TIMEOUT_MS) + "); 0 lets a batch wait for a lock on history as long as it lasts");
    if (c.getLong(Keys.API_LOCK_TIMEOUT_MS) < 0) throw new ConfigException("api.lock.timeout.ms must not be negative (got " + c.get(Keys.API_LOCK_TIMEOUT_MS)
        + "); 0 lets an API request wait for a lock as long as it lasts");
    if (c.getInt(Keys.WORKER_DB_RETRIES) < 0) throw new ConfigException("worker.db.retries must not be negative (got " + c.get(Keys.WORKER_DB_RETRIES) + ")");
    if (c.getInt(Keys.WORKER_POISON_MAX_SPLIT_COMMITS) < 2) {
      throw new ConfigException("worker.poison.max.split.commits must be at least 2 (got " + c.get(Keys.WORKER_POISON_MAX_SPLIT_COMMITS)
          + "): one split of a refused batch commits two halves");
    }
    if (c.getLong(Keys.WORKER_COMMIT_P99_WINDOW_MS) < c.getLong(Keys.WORKER_HEARTBEAT_MS)) {
      throw new ConfigException("worker.commit.p99.window.ms (" + c.get(Keys.WORKER_COMMIT_P99_WINDOW_MS) + ") must be at least worker.heartbeat.ms ("
          + c.get(Keys.WORKER_HEARTBEAT_MS) + "): a shorter window leaves out the batches committed between two heartbeats");
    }
    if (c.getLong(Keys.WORKER_HEARTBEAT_MS) * 2 > c.getLong(Keys.WORKER_LEASE_TTL_MS)) {
      throw new ConfigException("worker.lease.ttl.ms (" + c.get(Keys.WORKER_LEASE_TTL_MS) + ") must be at least twice worker.heartbeat.ms ("
          + c.get(Keys.WORKER_HEARTBEAT_MS) + "), or leases expire between renewals");
    }
    double rate = c.getDouble(Keys.PROBE_SIM_FAIL_RATE);
    if (rate < 0 || rate > 1) throw new ConfigException("probe.sim.fail.rate must be between 0 and 1 (got " + rate + ")");
    if (c.getInt(Keys.PROBE_SIM_FLAP_PCT) < 0 || c.getInt(Keys.PROBE_SIM_FLAP_PCT) > 100) throw new ConfigException("probe.sim.flap.pct must be 0..100");
    if (c.getInt(Keys.PROBE_SIM_PUSH_ROOMS) < 0 || c.getInt(Keys.PROBE_SIM_PUSH_ROOMS) > 1000) throw new ConfigException("probe.sim.push.rooms must be 0..1000");
    if (c.getLong(Keys.PROBE_SIM_PUSH_INTERVAL_MS) < 50) throw new ConfigException("probe.sim.push.interval.ms must be at least 50");
    if (c.getInt(Keys.PROBE_SIM_PUSH_ROOMS) > 0 && c.get(Keys.PROBE_INGEST_TOKENS).isBlank()) {
      throw new ConfigException("probe.sim.push.rooms needs a push token: set probe.ingest.tokens (the simulated rooms push with the first one)");
    }
    if (c.getInt(Keys.HTTP_PORT) < 0 || c.getInt(Keys.HTTP_PORT) > 65535) throw new ConfigException("http.port must be 0..65535");
    if (c.getLong(Keys.WORKER_SUSPECT_AFTER_MS) >= c.getLong(Keys.WORKER_DEAD_AFTER_MS)) {
      throw new ConfigException("worker.suspect.after.ms (" + c.get(Keys.WORKER_SUSPECT_AFTER_MS) + ") must be below worker.dead.after.ms ("
          + c.get(Keys.WORKER_DEAD_AFTER_MS) + ")");
    }
    for (ConfigKey k : List.of(Keys.RETENTION_HISTORY_DAYS_HIGH, Keys.RETENTION_HISTORY_DAYS_NORMAL)) {
      if (c.getInt(k) < 7) {
        throw new ConfigException(k.name() + " must be at least 7 (got " + c.get(k) + "): history is also the dedup ledger, and redeliveries"
            + " or outbox replays within a week must still be recognised");
      }
    }
    for (ConfigKey k : List.of(Keys.RETENTION_ALERT_DAYS, Keys.RETENTION_ROLLUP_DAYS, Keys.RETENTION_AHEAD_DAYS)) {
      if (c.getInt(k) < 1) throw new ConfigException(k.name() + " must be at least 1 (got " + c.get(k) + ")");
    }
    validateModes(c);
  }

  /** The fleet and probe mode thresholds (issue 12): positive, critical above high, a leave ratio inside (0, 1). */
  private static void validateModes(Config c) {
    for (ConfigKey k : List.of(Keys.SCHEDULER_QUEUE_SAMPLE_MS, Keys.SCHEDULER_FLEET_BACKLOG_HIGH, Keys.SCHEDULER_FLEET_GROWTH_PER_S, Keys.SCHEDULER_FLEET_GROWTH_SAMPLES, Keys.SCHEDULER_FLEET_FAILING_SAMPLES,
        Keys.SCHEDULER_FLEET_COMMIT_P99_HIGH_MS, Keys.PROBE_MODE_POLL_MS, Keys.PROBE_MODE_UNREACHABLE_MS, Keys.PROBE_MODE_OUTBOX_DEPTH_HIGH,
        Keys.PROBE_MODE_OUTBOX_AGE_HIGH_MS, Keys.PROBE_MODE_NACK_WINDOW_MS)) {
      if (!(c.getDouble(k) > 0)) throw new ConfigException(k.name() + " must be above 0 (got " + c.get(k) + ")");
    }
    for (ConfigKey k : List.of(Keys.SCHEDULER_FLEET_MIN_DWELL_MS, Keys.PROBE_MODE_MIN_DWELL_MS)) {
      if (c.getLong(k) < 0) throw new ConfigException(k.name() + " must not be negative (got " + c.get(k) + ")");
    }
    double pct = c.getDouble(Keys.SCHEDULER_FLEET_FAILING_WORKERS_PCT);
    if (!(pct > 0 && pct <= 100)) throw new ConfigException("scheduler.fleet.failing.workers.pct must be above 0 and at most 100 (got " + pct + ")");
    double ratio = c.getDouble(Keys.SCHEDULER_FLEET_LEAVE_RATIO);
    if (!(ratio > 0 && ratio < 1)) throw new ConfigException("scheduler.fleet.leave.ratio must be between 0 and 1, exclusive (got " + ratio + "): it is the hysteresis band");
    List<ConfigKey[]> pairs = List.of(new ConfigKey[] {Keys.SCHEDULER_FLEET_BACKLOG_HIGH, Keys.SCHEDULER_FLEET_BACKLOG_CRITICAL},
        new ConfigKey[] {Keys.SCHEDULER_FLEET_COMMIT_P99_HIGH_MS, Keys.SCHEDULER_FLEET_COMMIT_P99_CRITICAL_MS},
        new ConfigKey[] {Keys.PROBE_MODE_OUTBOX_DEPTH_HIGH, Keys.PROBE_MODE_OUTBOX_DEPTH_CRITICAL},
        new ConfigKey[] {Keys.PROBE_MODE_OUTBOX_AGE_HIGH_MS, Keys.PROBE_MODE_OUTBOX_AGE_CRITICAL_MS});
    for (ConfigKey[] p : pairs) {
      if (c.getDouble(p[1]) <= c.getDouble(p[0])) {
        throw new ConfigException(p[1].name() + " (" + c.get(p[1]) + ") must be above " + p[0].name() + " (" + c.get(p[0]) + ")");
      }
    }
  }

  /** The value of a key given by name, or null when no such key exists (for rule sets that name their own keys). */
  public String raw(String keyName) {
    return Keys.BY_NAME.containsKey(keyName) ? values.get(keyName) : null;
  }

  public String get(ConfigKey k) {
    return values.get(k.name());
  }

  public int getInt(ConfigKey k) {
    return Integer.parseInt(get(k).trim());
  }

  public long getLong(ConfigKey k) {
    return Long.parseLong(get(k).trim());
  }

  public double getDouble(ConfigKey k) {
    return Double.parseDouble(get(k).trim());
  }

  public boolean getBool(ConfigKey k) {
    return Boolean.parseBoolean(get(k).trim());
  }

  public Role role() {
    return Role.parse(get(Keys.ROLE));
  }

  /** The node id: {@code node.id}, or the host name when it is empty. */
  public String nodeId() {
    String id = get(Keys.NODE_ID);
    if (!id.isBlank()) return id;
    String host = System.getenv("HOSTNAME");
    if (host == null || host.isBlank()) {
      try {
        host = InetAddress.getLocalHost().getHostName();
      } catch (IOException e) {
        host = "node";
      }
    }
    return host;
  }

  /** A copy with some keys changed. */
  public Config with(Map<String, String> overrides) {
    Map<String, String> v = new LinkedHashMap<>(values);
    overrides.forEach((key, value) -> put(v, key, value, "override"));
    return new Config(v);
  }

  /** Keys whose values never appear in logs or API answers. */
  public static boolean isSecret(String key) {
    return key.contains("password") || key.contains("token") || key.contains("secret");
  }

  /** Key=value lines for the start-up log: secret keys masked, and the password of any URL's user-info ({@link Secrets#show}). */
  public List<String> describe() {
    List<String> out = new ArrayList<>();
    values.forEach((key, value) -> out.add(key + "=" + Secrets.show(key, value)));
    return out;
  }

  /** The documented default configuration, as shipped in conf/node.properties ({@code --print-config}). */
  public static String propertiesTemplate() {
    StringBuilder b = new StringBuilder();
    b.append("# inspection-node configuration: every key with its built-in default.\n")
        .append("# Use with: java -jar node.jar --config conf/node.properties\n")
        .append("# Each key can also be set by environment variable (INSPECT_ + upper-case key, dots as underscores)\n")
        .append("# or by a flag --key=value; flags win over the environment, which wins over this file.\n")
        .append("# An unknown key stops start-up with a message naming it. Regenerate with --print-config.\n")
        .append("# Secrets can come from files: INSPECT_X_FILE=/path reads key X's value from the file (e.g.\n")
        .append("# INSPECT_PG_PASSWORD_FILE=/run/secrets/pg); setting both INSPECT_X and INSPECT_X_FILE is an error.\n");
    for (ConfigKey k : Keys.ALL) {
      b.append("\n# ").append(k.help()).append(" (").append(k.type().name().toLowerCase()).append(", env ").append(k.envName()).append(")\n");
      b.append(k.name()).append('=').append(k.defaultValue()).append('\n');
    }
    return b.toString();
  }

  public static String help() {
    StringBuilder b = new StringBuilder();
    b.append("""
        Usage: java -jar node.jar --role=probe|worker|scheduler|all [--config FILE] [--key=value ...]

        Runs one node of the device-inspection platform: --role=all runs every role in one JVM. --demo.mode=true
        (what ./run.sh demo passes) adds a simulated fleet of 10,000 devices unless probe.sim.devices is given (1 % flapping)
        and 40 simulated hotel rooms pushing frames (probe.sim.push.rooms), generates the API token and console password
        (and a push token for the rooms), and allows the local services' default accounts.
        Without it a node adds no simulated device and refuses RabbitMQ's guest and a PostgreSQL superuser.
        --version prints the version and the git commit the jar was built from.

        Each key below can be set in the --config file (Java properties), by the environment variable
        shown, or by a flag --key=value (flags win over the environment, which wins over the file).
        An unknown key, flag or variable stops start-up with a message naming it.
        INSPECT_<KEY>_FILE=/path reads a key's value from a file (trailing line break dropped), so secrets need
        not sit in the environment: e.g. INSPECT_PG_PASSWORD_FILE=/run/secrets/pg (not together with INSPECT_PG_PASSWORD).
        Secret keys (password, token, secret) and passwords in URLs (redis://user:***@host) are masked in every log.
        --print-config prints the documented default configuration (conf/node.properties).

        java -jar node.jar migrate [--config FILE] [--key=value ...] applies the pending schema migrations (Flyway)
        with the pg.* settings given, seeds or checks the slot map and exits (0 done, 1 failed, 2 configuration).
        Run it with a role that may change the schema; nodes with pg.migrate=false then only check that the
        schema is current and refuse to start otherwise.

        """);
    for (ConfigKey k : Keys.ALL) {
      b.append(String.format("  --%-28s %s%n  %-30s default: %s  (env %s)%n", k.name() + "=" + k.type().name().toLowerCase(),
          k.help(), "", k.defaultValue().isEmpty() ? "(empty)" : k.defaultValue(), k.envName()));
    }
    return b.toString();
  }
}
