package dev.inspection.config;

import static dev.inspection.config.ConfigKey.Type.*;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every configuration key the node understands, with its built-in default. The services' addresses
 * default to the local ones; what only a demo wants (simulated devices, generated secrets, the services'
 * default accounts) needs {@code demo.mode=true}. {@code conf/node.properties} documents the same keys
 * (a test keeps the two equal).
 */
public final class Keys {
  private Keys() {}

  public static final ConfigKey ROLE = k("role", "all", STRING, "probe | worker | scheduler | all (all roles in one JVM: the demo)");
  public static final ConfigKey NODE_ID = k("node.id", "", STRING, "stable name of this node; empty = hostname. The probe's outbox message ids embed it, so keep it stable across restarts");
  public static final ConfigKey DATA_DIR = k("data.dir", "data", STRING, "directory for the probe's outbox and inventory cache");
  public static final ConfigKey HTTP_HOST = k("http.host", "127.0.0.1", STRING, "address the HTTP server (API, health, metrics) binds to");
  public static final ConfigKey HTTP_PORT = k("http.port", "8080", INT, "HTTP port of every role; 0 picks a free port (printed at start)");
  public static final ConfigKey HTTP_ADVERTISED_URL = k("http.advertised.url", "", STRING, "base URL other nodes and operators reach this node's HTTP server by (e.g. https://sched-1.example.net:8080): a leading scheduler publishes it as leader_url, where followers and the console send mutations; empty = http(s)://http.host:port, with this host's name instead of a wildcard http.host (0.0.0.0, ::)");
  public static final ConfigKey HTTP_TLS_CERT = k("http.tls.cert", "", STRING, "PEM file of the HTTPS certificate (server certificate first, then its chain); with http.tls.key the port serves HTTPS only (API, console, health, metrics) and the session cookie is Secure; empty = plain HTTP");
  public static final ConfigKey HTTP_TLS_KEY = k("http.tls.key", "", STRING, "PEM file of the private key of http.tls.cert (PKCS#8, or PKCS#1 RSA); keep it readable by the node's user only");

  public static final ConfigKey PG_HOST = k("pg.host", "127.0.0.1", STRING, "PostgreSQL host");
  public static final ConfigKey PG_PORT = k("pg.port", "5432", INT, "PostgreSQL port");
  public static final ConfigKey PG_DATABASE = k("pg.database", "test", STRING, "PostgreSQL database");
  public static final ConfigKey PG_USER = k("pg.user", "postgres", STRING, "PostgreSQL user");
  public static final ConfigKey PG_PASSWORD = k("pg.password", "", STRING, "PostgreSQL password (prefer the environment variable INSPECT_PG_PASSWORD)");
  public static final ConfigKey PG_SCHEMA = k("pg.schema", "inspection", STRING, "schema holding every table; created and migrated at start");
  public static final ConfigKey PG_MIGRATE = k("pg.migrate", "true", BOOL, "apply pending schema migrations at start (needs a role that may change the schema); false: only check that the schema is current and refuse to start (exit code 1) when a migration is pending: run `java -jar node.jar migrate` first (README Upgrading)");
  public static final ConfigKey PG_POOL_SIZE = k("pg.pool.size", "8", INT, "connections in each role's pool");
  public static final ConfigKey PG_IDLE_TX_TIMEOUT_MS = k("pg.idle.tx.timeout.ms", "10000", LONG, "PostgreSQL ends a session idle inside a transaction this long (a paused process must not hold a lease lock or the term lock)");
  public static final ConfigKey PG_SSL_MODE = k("pg.ssl.mode", "disable", STRING, "TLS to PostgreSQL, as libpq's sslmode: disable | require (encrypted, server NOT authenticated) | verify-ca (certificate signed by pg.tls.ca) | verify-full (also the certificate names pg.host: use this)");
  public static final ConfigKey PG_TLS_CA = k("pg.tls.ca", "", STRING, "PEM file of the CA certificate(s) that sign PostgreSQL's certificate (verify-ca, verify-full; with require it makes require check the chain like libpq); empty = the JVM's trust store");

  public static final ConfigKey RABBIT_HOST = k("rabbit.host", "127.0.0.1", STRING, "RabbitMQ host (one node; a cluster: rabbit.addresses)");
  public static final ConfigKey RABBIT_PORT = k("rabbit.port", "5672", INT, "RabbitMQ port");
  public static final ConfigKey RABBIT_ADDRESSES = k("rabbit.addresses", "", STRING, "RabbitMQ cluster nodes, host:port,host:port,... ([v6]:port; a missing port is rabbit.port): a connection tries them in order and, after losing its node, reconnects to the next one, trying the lost node last; empty = rabbit.host:rabbit.port alone. With rabbit.ssl every node's certificate must name its host. List them in another order on some nodes to spread the connections");
  public static final ConfigKey RABBIT_USER = k("rabbit.user", "guest", STRING, "RabbitMQ user");
  public static final ConfigKey RABBIT_PASSWORD = k("rabbit.password", "guest", STRING, "RabbitMQ password (prefer INSPECT_RABBIT_PASSWORD)");
  public static final ConfigKey RABBIT_VHOST = k("rabbit.vhost", "/", STRING, "RabbitMQ virtual host");
  public static final ConfigKey RABBIT_SSL = k("rabbit.ssl", "false", BOOL, "TLS to RabbitMQ (usually port 5671): the broker's certificate must be signed by rabbit.tls.ca and name the host connected to (rabbit.host, or each node of rabbit.addresses)");
  public static final ConfigKey RABBIT_TLS_CA = k("rabbit.tls.ca", "", STRING, "PEM file of the CA certificate(s) that sign RabbitMQ's certificate; empty = the JVM's trust store");
  public static final ConfigKey RABBIT_MANAGEMENT_URL = k("rabbit.management.url", "http://127.0.0.1:15672", STRING, "RabbitMQ management HTTP API (plugin rabbitmq_management) the leader uses to close a deposed worker's AMQP connections when it declares the worker DEAD or fences a move, so single-active-consumer hands its queues to the new owner at once. A cluster: one URL per node, comma-separated (http://mq1:15672,http://mq2:15672): each request goes to the one that answered last and, when it gives no answer, to the next; off = never (a hung worker's queues then wait for the broker's heartbeat timeout)");
  public static final ConfigKey RABBIT_MANAGEMENT_USER = k("rabbit.management.user", "guest", STRING, "user of rabbit.management.url: tagged administrator (or monitoring, to see and close every user's connections)");
  public static final ConfigKey RABBIT_MANAGEMENT_PASSWORD = k("rabbit.management.password", "guest", STRING, "SECRET: password of rabbit.management.user (prefer INSPECT_RABBIT_MANAGEMENT_PASSWORD)");

  public static final ConfigKey REDIS_URL = k("redis.url", "redis://127.0.0.1:6379", STRING, "Redis, used only for notifications (losing it never changes a result)");
  public static final ConfigKey REDIS_CHANNEL_PREFIX = k("redis.channel.prefix", "inspection", STRING, "prefix of the Redis pub/sub channels");

  public static final ConfigKey SLOTS_TOTAL = k("slots.total", "256", INT, "number of slots; slot = CRC32(device_id) mod slots.total. Three queues per slot: high, normal, low, which cost the broker CPU even when idle (256 slots: about 0.07 cores more than 16 with 100 devices), so a small fleet can start with 16-32 and grow with a reshard (README, Resharding: Choosing the count). Seeds the slot map of a new installation; after that the map in the database is the truth and a node whose slots.total differs refuses to start (exit code 2): change the count with a reshard (POST /api/v1/slot-map, README Resharding)");
  public static final ConfigKey RESHARD_EFFECTIVE_AFTER_MS = k("reshard.effective.after.ms", "300000", LONG, "a reshard (POST /api/v1/slot-map) takes effect this long after it is scheduled (T0): probes switch to the new map then, and its queues are declared before");
  public static final ConfigKey RESHARD_WINDOW_END_MS = k("reshard.window.end.ms", "600000", LONG, "the grace window of a reshard ends this long after T0 (more than reshard.effective.after.ms): until then workers accept results of the previous map version; after it they are dead-lettered as stale_slot_map");
  public static final ConfigKey TOPOLOGY_PREFIX = k("topology.prefix", "inspection", STRING, "prefix of every exchange and queue name: {prefix}.status, {prefix}.status.s{nnn}.{high|normal|low}, {prefix}.dlx, {prefix}.dead");
  public static final ConfigKey BROKER_QUEUE_BUDGET_BYTES = k("broker.queue.budget.bytes", "8589934592", LONG, "total bytes the high and normal slot queues together may hold (the low queues have queue.low.max.bytes), split over them (x-max-length-bytes per queue; see broker.queue.high.weight); beyond a queue's share publishes are refused (reject-publish) and stay in the probe's outbox. Existing queues keep the limit they were declared with: a change needs them deleted and declared again (README, Bounded storage)");
  public static final ConfigKey BROKER_QUEUE_HIGH_WEIGHT = k("broker.queue.high.weight", "4", INT, "shares of the budget a high (critical) queue gets against a normal queue's 1: 256 slots, 8 GiB and 4 give 25.6 MiB per high queue and 6.4 MiB per normal queue");
  public static final ConfigKey QUEUE_LOW_MAX_BYTES = k("queue.low.max.bytes", "4194304", LONG, "byte limit of each slot's low-priority queue (devices of priority 3), outside broker.queue.budget.bytes and kept much shorter than a normal queue's share so low is refused first under overload (reject-publish: the probe sees the nack and keeps the rows)");
  public static final ConfigKey QUEUE_LOW_MAX_LENGTH = k("queue.low.max.length", "5000", INT, "message limit of each slot's low-priority queue (reject-publish, like queue.low.max.bytes)");
  public static final ConfigKey QUEUE_LOW_TYPE = k("queue.low.type", "classic", STRING, "classic | quorum: the queue type of the low-priority lanes. On a RabbitMQ cluster (rabbit.addresses) use quorum: a classic queue lives on one node, and while that node is down no client can declare the topology, on any node. Existing queues keep their type: a change needs them deleted and declared again (README, Bounded storage)");
  public static final ConfigKey QUEUE_DELIVERY_LIMIT = k("queue.delivery.limit", "20", INT, "deliveries of one message before it is dead-lettered as poison");

  public static final ConfigKey PROBE_GROUP = k("probe.group", "default", STRING, "probe group whose devices this probe inspects");
  public static final ConfigKey PROBE_SIM_DEVICES = k("probe.sim.devices", "0", INT, "simulated devices (check type sim) this probe adds to its inventory; 0 for none; with demo.mode=true and this key not given, 10000");
  public static final ConfigKey PROBE_SIM_FAIL_RATE = k("probe.sim.fail.rate", "0.02", DOUBLE, "probability that a simulated check reports DOWN");
  public static final ConfigKey PROBE_SIM_FLAP_PCT = k("probe.sim.flap.pct", "0", INT, "percent (0..100) of the simulated devices that flap: they alternate UP/DOWN for 40 checks, then stay UP for 40, so device.flapping alerts start and stop; with demo.mode=true and this key not given, 1");
  public static final ConfigKey PROBE_SIM_PUSH_ROOMS = k("probe.sim.push.rooms", "0", INT, "simulated hotel rooms (one room-control unit each, hotel 'sim-hotel') that push 0x36/0x0F frames to this probe's own POST /ingest/v1/hotel_room with the first of probe.ingest.tokens, including reordered, late, duplicated and malformed frames; 0 for none; with demo.mode=true and this key not given, 40 (and a push token is generated when probe.ingest.tokens is empty)");
  public static final ConfigKey PROBE_SIM_PUSH_INTERVAL_MS = k("probe.sim.push.interval.ms", "2000", LONG, "how often every simulated room pushes a frame (probe.sim.push.rooms): one push of all rooms' frames per interval");
  public static final ConfigKey PROBE_INTERVAL_MS = k("probe.interval.ms", "10000", LONG, "default inspection interval of a device");
  public static final ConfigKey PROBE_JITTER_PCT = k("probe.jitter.pct", "10", INT, "each device's schedule is shifted by up to this percent of its interval");
  public static final ConfigKey PROBE_LOOK_GATHER_MS = k("probe.look.gather.ms", "500", LONG, "a due device's check may wait up to this long (and at most a tenth of its interval) for others to come due, so that they travel together (one outbox commit, one message per slot, one worker transaction): a look at the schedule when 64 devices are due or a due one has waited that long, or at once for a critical (priority 1) device; a busy probe, with devices due at every look, does not wait; 0 = each device at its due time");
  public static final ConfigKey PROBE_INVENTORY_FILE = k("probe.inventory.file", "", STRING, "JSON-lines file of devices to inspect (one device object per line); empty for none");
  public static final ConfigKey PROBE_INVENTORY_URL = k("probe.inventory.url", "", STRING, "scheduler base URL to pull this group's inventory from (cached in data.dir); empty for none");
  public static final ConfigKey PROBE_INVENTORY_REFRESH_MS = k("probe.inventory.refresh.ms", "30000", LONG, "how often the inventory is pulled from probe.inventory.url");
  public static final ConfigKey PROBE_PACING_REFRESH_MS = k("probe.pacing.refresh.ms", "5000", LONG, "how often a probe reads the cold-start pace (scheduler.min.workers) from probe.inventory.url or, in --role=all, from its own scheduler (the leader also announces it on Redis)");
  public static final ConfigKey PROBE_SLOT_MAP_REFRESH_MS = k("probe.slot.map.refresh.ms", "5000", LONG, "how often a probe reads the slot map version to stamp results with (a reshard's switch) from probe.inventory.url or, in --role=all, from its own scheduler");
  public static final ConfigKey PROBE_PACING_START = k("probe.pacing.start", "0.25", DOUBLE, "share of the normal rate non-critical devices are inspected at until a scheduler's pace is heard (the cold-start pace; 1 = start at full speed); 0 < value <= 1");
  public static final ConfigKey PROBE_CHECK_TIMEOUT_MS = k("probe.check.timeout.ms", "2000", LONG, "timeout of one tcp/http check, and of each echo of an icmp check (a device's check_spec.timeout_ms only shortens it)");
  public static final ConfigKey PROBE_CHECKS_MAX_INFLIGHT = k("probe.checks.max.inflight", "2000", INT, "checks one probe runs at the same time, at most; devices due beyond it wait for the next tick (a fleet of slow or silent targets cannot pile up sockets)");
  public static final ConfigKey PROBE_HTTP_MAX_BODY_BYTES = k("probe.http.max.body.bytes", "65536", INT, "an http check reads at most this much of a response body, then closes the connection (the status is what counts)");
  public static final ConfigKey PROBE_TARGET_ALLOW = k("probe.target.allow", "", STRING, "comma-separated CIDR ranges checks may connect to (e.g. 10.20.0.0/16,192.168.5.0/24); empty = any address not denied. Judged on the address a host name resolves to, before connecting; import and PATCH refuse targets written as a denied address (set the same value on schedulers)");
  public static final ConfigKey PROBE_TARGET_DENY = k("probe.target.deny", "169.254.0.0/16,fe80::/10,100.100.100.200/32,fd00:ec2::254/128", STRING, "comma-separated CIDR ranges checks never connect to, even when allowed: by default link-local (holding the cloud metadata address 169.254.169.254) and other clouds' metadata addresses");

  public static final ConfigKey OUTBOX_COMMIT_MAX_ROWS = k("outbox.commit.max.rows", "500", INT, "most results written in one SQLite transaction (group commit under synchronous=FULL)");
  public static final ConfigKey OUTBOX_PUBLISH_CHANNELS = k("outbox.publish.channels", "4", INT, "AMQP channels the probe publishes on; a device always uses the same one, so its results stay in order");
  public static final ConfigKey OUTBOX_MAX_INFLIGHT = k("outbox.max.inflight", "20000", INT, "published but not yet confirmed results, and results a slot gathers (outbox.publish.gather.ms); beyond it rows wait in the outbox (at 5000 gathering starved the publisher: 0.17 cores idle while the outbox grew)");
  public static final ConfigKey OUTBOX_PUBLISH_BATCH_MAX = k("outbox.publish.batch.max", "100", INT, "most results in one AMQP message: the results of one slot and priority waiting together go as one schema-v3 batch (a lone result goes at once); 1 publishes schema v2, one result per message, for workers older than v3");
  public static final ConfigKey OUTBOX_PUBLISH_GATHER_MS = k("outbox.publish.gather.ms", "500", LONG, "while the probe inspects in a backpressure mode (results already wait in the slot queues), each slot and priority gathers its results for up to this long before they go as one message (fewer, larger messages cost the broker less); 0 = never: a slot publishes as soon as nothing of it is unconfirmed");
  public static final ConfigKey OUTBOX_PUBLISH_GATHER_BUSY_PER_S = k("outbox.publish.gather.busy.per.s", "5000", DOUBLE, "outside a backpressure mode, while this probe publishes at least this many results/s (measured every second; once busy, until the rate falls below 80 % of it), each slot and priority gathers its results for up to outbox.publish.gather.busy.ms: messages several times larger for a short wait; 0 = never");
  public static final ConfigKey OUTBOX_PUBLISH_GATHER_BUSY_MS = k("outbox.publish.gather.busy.ms", "400", LONG, "how long a slot and priority gathers while this probe is busy (outbox.publish.gather.busy.per.s); results wait up to this much longer; 0 = never (at a million devices every 60 s, 400 against 200 carried 19.5 results per message instead of 11.7 and halved the probe-to-commit lag)");
  public static final ConfigKey OUTBOX_PUBLISH_GATHER_ROWS = k("outbox.publish.gather.rows", "50", INT, "while gathering (outbox.publish.gather.ms), a slot and priority publishes at once when it holds this many results (at most outbox.publish.batch.max)");
  public static final ConfigKey OUTBOX_PUBLISH_BATCH_BYTES = k("outbox.publish.batch.bytes", "262144", INT, "most bytes of one batch message; keep it below the workers' worker.max.batch.bytes");
  public static final ConfigKey OUTBOX_REPLAY_INTERVAL_MS = k("outbox.replay.interval.ms", "2000", LONG, "how often unconfirmed rows are looked for and published again");
  public static final ConfigKey OUTBOX_REPLAY_MIN_AGE_MS = k("outbox.replay.min.age.ms", "3000", LONG, "an unconfirmed row is replayed only once it is this old");
  public static final ConfigKey OUTBOX_MAX_ROWS = k("outbox.max.rows", "2000000", LONG, "watermark: above this many unconfirmed rows the outbox sheds low-priority (3), then normal results, oldest first, down to 90 % (never critical ones; each counted per device-minute); 0 = no row watermark");
  public static final ConfigKey OUTBOX_MAX_BYTES = k("outbox.max.bytes", "2147483648", LONG, "watermark: above this many bytes used by the outbox file (pages and WAL) it deletes confirmed rows kept for outbox.retention.ms, oldest first, and only then sheds the same way; 0 = no byte watermark");
  public static final ConfigKey OUTBOX_MIN_FREE_BYTES = k("outbox.min.free.bytes", "1073741824", LONG, "watermark: with less free than this on the disk under data.dir (plus the file's free pages) the outbox sheds the same way; 0 = no disk watermark");
  public static final ConfigKey OUTBOX_SHED_REPORT_MS = k("outbox.shed.report.ms", "5000", LONG, "how often the probe sends its shed ledger (per device-minute counts) to the schedulers through the {prefix}.shed queue");
  public static final ConfigKey OUTBOX_RETENTION_MS = k("outbox.retention.ms", "3600000", LONG, "confirmed rows are kept this long for the ledger, then deleted (a chunk of 10,000 per transaction); they take about results/s x this x 600 bytes of disk, and over outbox.max.bytes or under outbox.min.free.bytes they go earlier (probe_outbox_retention_cut_total)");

  public static final ConfigKey WORKER_PREFETCH_HIGH = k("worker.prefetch.high", "300", INT, "prefetch of each high-priority slot queue consumer; keep it at least twice high's share of a batch (worker.batch.max x its weight share) so the next batch's high share waits in the mailbox while one commits");
  public static final ConfigKey WORKER_PREFETCH_NORMAL = k("worker.prefetch.normal", "100", INT, "prefetch of each normal-priority slot queue consumer, in messages (a v3 message carries several results); keep it at least twice normal's share of a batch; every unacked message waits in the worker's heap, and with a backlog 300 per queue held ~25 s of results there, costing GC time");
  public static final ConfigKey WORKER_CONSUMER_OPEN_THREADS = k("worker.consumer.open.threads", "64", INT, "threads that open the slots' consumers (a channel, its prefetch and a consume per lane: nine broker round trips per slot); a survivor taking over a dead worker's slots opens them all at once, and on the 20 threads of the Vert.x worker pool 132 slots opened in steps of 20 over 3 s");
  public static final ConfigKey WORKER_PREFETCH_LOW = k("worker.prefetch.low", "50", INT, "prefetch of each low-priority slot queue consumer (low's share of a batch is small)");
  public static final ConfigKey WORKER_LANE_WEIGHT_HIGH = k("worker.lane.weight.high", "6", INT, "share of a batch for high priority when several lanes hold deliveries (weights high:normal:low; 6:2:1 gives high:normal 3:1); at least 1");
  public static final ConfigKey WORKER_LANE_WEIGHT_NORMAL = k("worker.lane.weight.normal", "2", INT, "share of a batch for normal priority (see worker.lane.weight.high); 0 = only what starves or what high leaves");
  public static final ConfigKey WORKER_LANE_WEIGHT_LOW = k("worker.lane.weight.low", "1", INT, "share of a batch for low priority (see worker.lane.weight.high); keep it below normal's");
  public static final ConfigKey WORKER_LANE_FILL_BESIDE_HIGH = k("worker.lane.fill.beside.high", "false", BOOL, "false: a batch that carries critical results holds at most the lanes' weighted shares (150 + 50 of 200), so it commits sooner and critical results wait less; true: fill it up to worker.batch.max with normal and low anyway (more throughput per batch, longer critical lag)");
  public static final ConfigKey WORKER_LANE_STARVATION_MS = k("worker.lane.starvation.ms", "60000", LONG, "anti-starvation: a result at the head of a lane's mailbox older than this since its collected_at is taken even when the weights leave its lane no place (at most a quarter of the batch)");
  public static final ConfigKey WORKER_BATCH_MAX = k("worker.batch.max", "200", INT, "most messages committed in one batch transaction");
  public static final ConfigKey WORKER_COMMIT_TAKE_ALONG = k("worker.commit.take.along", "true", BOOL, "a batch transaction that starts while none is in flight takes along every slot's batch that is waiting out worker.batch.linger.ms, so that at a low rate the slots' results share one transaction instead of one each (an idle node of 16 slots: fewer PostgreSQL transactions and event-loop wake-ups, and less lag); only while at most 32 slots linger (more: results reach most slots every linger, and taking them all at once added a third of a second to the p99 lag at half of capacity); false = each slot's batch waits its linger");
  public static final ConfigKey WORKER_GENERIC_PLAN_MAX_RESULTS = k("worker.generic.plan.max.results", "16", INT, "a batch transaction of at most this many results runs its statements on PostgreSQL's generic plans (made once per connection) instead of planning each for its values: planning was about 40 % of PostgreSQL's CPU for the one-result commits of an idle node, while larger batches need plans made for their values (at capacity generic plans cost more); 0 = always plan for the values");
  public static final ConfigKey WORKER_SNAPSHOT_LAYOUT = k("worker.snapshot.layout", "compact", STRING, "the layout of the derived snapshot written for every device in every batch: compact (v2: about 170 bytes a steady device, a third of v1's, less for PostgreSQL to write and for a takeover to read) | v1 (the first layout, members named in full). Every build reads both; a build before the compact layout reads v1 only (a compact snapshot is unreadable to it and that device's counters start again), so during a rolling upgrade from such a build set v1 until no older worker runs (README Upgrading)");
  public static final ConfigKey WORKER_BATCH_LINGER_MS = k("worker.batch.linger.ms", "200", LONG, "longest wait for a batch to fill");
  public static final ConfigKey WORKER_MERGE_WINDOW_MS_BY_PROFILE = k("worker.merge.window.ms.by.profile", "hotel_room=500", STRING, "merge window per payload profile, as profile=ms[,profile=ms] (0..10000; a profile not named: none): a worker holds the messages of pushed frames of that profile back (unacked) until the window closes, then commits them as one batch, so each device's frames within the window fold into one current write (seed 004); history keeps every frame. Other messages do not wait");
  public static final ConfigKey WORKER_MAX_MESSAGE_BYTES = k("worker.max.message.bytes", "65536", INT, "a larger message of one result (schema v2) is dead-lettered as oversized");
  public static final ConfigKey WORKER_MAX_BATCH_BYTES = k("worker.max.batch.bytes", "1048576", INT, "a larger message of several results (schema v3) is dead-lettered as oversized, whole; keep it above the probes' outbox.publish.batch.bytes");
  public static final ConfigKey WORKER_MAX_FUTURE_SKEW_MS = k("worker.max.future.skew.ms", "600000", LONG, "a result whose cycle_id (the probe's check time, epoch ms) is further ahead of the worker's clock than this is dead-lettered as future_cycle (it would outrank every real result until then)");
  public static final ConfigKey WORKER_DB_RETRIES = k("worker.db.retries", "3", INT, "a batch transaction that lost a race (serialization failure 40001, deadlock 40P01, lock or statement timeout) is tried again this often, after backoff.initial.ms, before it counts as a database outage");
  public static final ConfigKey WORKER_POISON_MAX_SPLIT_COMMITS = k("worker.poison.max.split.commits", "64", INT, "when PostgreSQL refuses rows of a batch transaction (a data error: SQLSTATE class 22, 23 ...), the worker halves it by slot, then by device, to dead-letter only the refused devices' results (db_rejected); most commits one such split may use before the batch is requeued like an outage instead");
  public static final ConfigKey WORKER_DEGRADED_ENABLED = k("worker.degraded.enabled", "true", BOOL, "DB-degraded write mode (seed 000 §7.5): when this worker's commits fail or slow down, write current status, derived state, alerts and critical history only, and spill the other history rows to the back-fill queue");
  public static final ConfigKey WORKER_DEGRADED_WINDOW_MS = k("worker.degraded.window.ms", "180000", LONG, "window over which this worker's commit failure ratio and p99 latency are measured to enter the degraded mode");
  public static final ConfigKey WORKER_DEGRADED_MIN_COMMITS = k("worker.degraded.min.commits", "10", INT, "commits the window must hold before its failure ratio or p99 may enter the degraded mode (a commit stuck longer than worker.degraded.enter.p99.ms enters it alone)");
  public static final ConfigKey WORKER_DEGRADED_ENTER_FAILURE_RATIO = k("worker.degraded.enter.failure.ratio", "0.3", DOUBLE, "enter the degraded mode when more than this share of the window's commits failed (0..1)");
  public static final ConfigKey WORKER_DEGRADED_ENTER_P99_MS = k("worker.degraded.enter.p99.ms", "5000", LONG, "enter the degraded mode when the window's commit p99 exceeds this, or one commit has been in flight longer");
  public static final ConfigKey WORKER_DEGRADED_EXIT_FAILURE_RATIO = k("worker.degraded.exit.failure.ratio", "0.05", DOUBLE, "healthy (to leave the degraded mode): at most this share of the commits in the last worker.degraded.dwell.ms failed; below the enter ratio (hysteresis)");
  public static final ConfigKey WORKER_DEGRADED_EXIT_P99_MS = k("worker.degraded.exit.p99.ms", "1000", LONG, "healthy (to leave the degraded mode): commit p99 of the last worker.degraded.dwell.ms at most this and no commit in flight longer; below the enter p99 (hysteresis)");
  public static final ConfigKey WORKER_DEGRADED_DWELL_MS = k("worker.degraded.dwell.ms", "60000", LONG, "the degraded mode is left only after this long continuously healthy (and lasts at least this long)");
  public static final ConfigKey WORKER_DEGRADED_TICK_MS = k("worker.degraded.tick.ms", "1000", LONG, "how often the degraded mode is evaluated between commits (dwell, commits stuck in flight)");
  public static final ConfigKey WORKER_BACKFILL_BATCH = k("worker.backfill.batch", "16", INT, "spilled batches (one slot batch each, at most worker.batch.max results) back-filled into history and rollups per round, each in its own transaction");
  public static final ConfigKey WORKER_BACKFILL_INTERVAL_MS = k("worker.backfill.interval.ms", "500", LONG, "longest pause between back-fill rounds while the queue holds spilled batches: a round is followed by a pause as long as it took, up to this (the back-fill takes at most half of one connection's time, so live traffic keeps the database); an empty queue is polled every 10 x this");
  public static final ConfigKey WORKER_LEASE_TTL_MS = k("worker.lease.ttl.ms", "30000", LONG, "lease duration; a heartbeat renews the leases when waiting for the next one would let more than a third of this pass (every third heartbeat at the defaults)");
  public static final ConfigKey WORKER_HEARTBEAT_MS = k("worker.heartbeat.ms", "3000", LONG, "heartbeat interval (liveness and backlog figures); the leases are renewed at the heartbeats that keep them at least two thirds of worker.lease.ttl.ms ahead");
  public static final ConfigKey WORKER_LEASE_POLL_MS = k("worker.lease.poll.ms", "1000", LONG, "how often a worker reads its leases from PostgreSQL (Redis notifications make it look sooner; the poll is the fallback)");
  public static final ConfigKey WORKER_SUSPECT_AFTER_MS = k("worker.suspect.after.ms", "15000", LONG, "heartbeat age at which the leader marks a worker SUSPECTED (it keeps its slots) (read by the scheduler leader, which decides every worker state)");
  public static final ConfigKey WORKER_DEAD_AFTER_MS = k("worker.dead.after.ms", "30000", LONG, "heartbeat age at which the leader marks a worker DEAD and moves its slots (a crash is found sooner through the worker's liveness lock) (read by the scheduler leader, which decides every worker state)");
  public static final ConfigKey WORKER_WARMUP_MS = k("worker.warmup.ms", "60000", LONG, "a new worker stays WARMING this long before it gets slots; skipped while no worker is ACTIVE (cold start) (read by the scheduler leader, which decides every worker state)");
  public static final ConfigKey WORKER_QUARANTINE_MS = k("worker.quarantine.ms", "30000", LONG, "a worker that came back from DEAD waits this long in QUARANTINE before WARMING again (read by the scheduler leader, which decides every worker state)");
  public static final ConfigKey HISTORY_POLICY = k("history.policy", "every", STRING, "which results go to device_status_history: every (each result) | changes (a result whose payload differs from the device's previous one, plus a heartbeat row every history.heartbeat.ms); current status, alerts, derived state and rollups are the same under both");
  public static final ConfigKey HISTORY_POLICY_BY_PROFILE = k("history.policy.by.profile", "", STRING, "per payload profile overrides of history.policy, as profile=policy[,profile=policy] (e.g. hotel_room=changes); empty = none");
  public static final ConfigKey HISTORY_HEARTBEAT_MS = k("history.heartbeat.ms", "900000", LONG, "under history.policy=changes, an unchanged device still gets a history row this often (by collected_at)");
  public static final ConfigKey HISTORY_IGNORED_FIELDS = k("history.ignored.fields", "latency_ms", STRING, "top-level payload fields whose change alone is not a change for history.policy=changes (measurements that jitter); comma-separated; never status");
  public static final ConfigKey WORKER_DIRECTORY_TTL_MS = k("worker.directory.ttl.ms", "600000", LONG, "how long the worker keeps a device's inventory listing (priority, payload profile) before it reads it again: an older one is still used for the device's results while it is read again in the background, so an inventory change reaches the worker within this plus one check interval of the device");
  public static final ConfigKey WORKER_DIRECTORY_MAX_DEVICES = k("worker.directory.max.devices", "1000000", INT, "most inventory listings the worker keeps (about 100 bytes each); a device beyond them is read from the inventory before its results are planned, so set it above the devices this worker may hold");
  public static final ConfigKey WORKER_SNAPSHOT_PAGE = k("worker.snapshot.page", "1000", INT, "rows per page when a new owner loads a slot's derived state (INV-10)");
  public static final ConfigKey WORKER_FAULT_FREEZE_HEARTBEAT_AFTER_MS = k("worker.fault.freeze.heartbeat.after.ms", "0", LONG, "DRILLS ONLY: after this many ms the worker stops heartbeating and reading its leases but keeps consuming (a zombie, seed 000 scenario E); 0 = off");

  public static final ConfigKey SCHEDULER_TICK_MS = k("scheduler.tick.ms", "500", LONG, "how often the leader checks liveness, heartbeats, moves and unowned slots");
  public static final ConfigKey SCHEDULER_ELECTION_MS = k("scheduler.election.ms", "1000", LONG, "how often a follower tries to become leader, and the leader pings its lock connection");
  public static final ConfigKey SCHEDULER_LEADER_SESSION_TIMEOUT_MS = k("scheduler.leader.session.timeout.ms", "5000", LONG, "PostgreSQL ends the leader's lock session after this much silence (idle_session_timeout), so a paused leader loses the lock");
  public static final ConfigKey SCHEDULER_LEADER_GRACE_MS = k("scheduler.leader.grace.ms", "15000", LONG, "a new leader declares no worker dead and no lease expired for this long (after an outage every heartbeat looks old)");
  public static final ConfigKey SCHEDULER_LEASE_EXPIRY_GRACE_MS = k("scheduler.lease.expiry.grace.ms", "5000", LONG, "a lease this far past lease_until is taken over with an epoch bump");
  public static final ConfigKey SCHEDULER_MOVE_TIMEOUT_MS = k("scheduler.move.timeout.ms", "10000", LONG, "an old owner that has not released a MOVING slot in this time is fenced: the slot moves with an epoch bump");
  public static final ConfigKey SCHEDULER_LOCK_TIMEOUT_MS = k("scheduler.lock.timeout.ms", "2000", LONG, "longest wait of a leader write for a row lock (e.g. an epoch bump behind a batch); the round is retried");
  public static final ConfigKey SCHEDULER_DRAIN_BATCH = k("scheduler.drain.batch", "32", INT, "slots of a draining worker that move at the same time");
  public static final ConfigKey SCHEDULER_REBALANCE_INTERVAL_MS = k("scheduler.rebalance.interval.ms", "60000", LONG, "periodic rebalance check (a join, drain or death triggers one at once)");
  public static final ConfigKey SCHEDULER_DEVICE_COUNT_INTERVAL_MS = k("scheduler.device.count.interval.ms", "600000", LONG, "how often the leader counts each slot's devices and reads the critical ones for the slot weights (scheduler.weight.devices, .critical), and again when the slot count changes or a reshard's switch has moved the devices (at most once per scheduler.rebalance.interval.ms): the count scans device_status_current (at a million devices 4.7-4.9 s of statement time a read, with a parallel worker: 60-70 milli-cores, about 3 % of two cores, when it ran every rebalance interval); between reads the weights use the last counts");
  public static final ConfigKey SCHEDULER_REBALANCE_THRESHOLD = k("scheduler.rebalance.threshold", "0.25", DOUBLE, "rebalance only when (heaviest - lightest) / mean load exceeds this");
  public static final ConfigKey SCHEDULER_REBALANCE_MAX_MOVES = k("scheduler.rebalance.max.moves", "5", INT, "most slots one rebalance round moves");
  public static final ConfigKey SCHEDULER_COOLDOWN_SLOT_MS = k("scheduler.cooldown.slot.ms", "300000", LONG, "a slot is not moved again by a rebalance within this time");
  public static final ConfigKey SCHEDULER_COOLDOWN_SOURCE_MS = k("scheduler.cooldown.source.ms", "60000", LONG, "a worker is not a rebalance source again within this time");
  public static final ConfigKey SCHEDULER_WEIGHT_DEVICES = k("scheduler.weight.devices", "1", DOUBLE, "slot weight per device (seed 000 §4.3 α)");
  public static final ConfigKey SCHEDULER_WEIGHT_RATE = k("scheduler.weight.rate", "5", DOUBLE, "slot weight per message/s (β)");
  public static final ConfigKey SCHEDULER_WEIGHT_BACKLOG = k("scheduler.weight.backlog", "10", DOUBLE, "slot weight per waiting message (γ)");
  public static final ConfigKey SCHEDULER_WEIGHT_PROCESS_MS = k("scheduler.weight.process.ms", "2", DOUBLE, "slot weight per ms of average batch time (δ)");
  public static final ConfigKey SCHEDULER_WEIGHT_CRITICAL = k("scheduler.weight.critical", "3", DOUBLE, "slot weight per critical (priority 1) device (ε)");
  // issue 14: slots in waves (cold start and scale-out, scheduler/ScaleOutPlanner)
  public static final ConfigKey SCHEDULER_WAVE_FIRST = k("scheduler.wave.first", "16", INT, "slots in the first wave to a worker (a cold start's FREE slots, a joining worker's scale-out)");
  public static final ConfigKey SCHEDULER_WAVE_MIN = k("scheduler.wave.min", "2", INT, "smallest wave: a slow worker still gets this many slots per wave");
  public static final ConfigKey SCHEDULER_WAVE_MAX = k("scheduler.wave.max", "64", INT, "largest wave to one worker");
  public static final ConfigKey SCHEDULER_WAVE_FAST_MS = k("scheduler.wave.fast.ms", "15000", LONG, "a wave whose slots were all ACTIVE on the worker within this time doubles its next wave (if its commits and backlog allow)");
  public static final ConfigKey SCHEDULER_WAVE_SLOW_MS = k("scheduler.wave.slow.ms", "30000", LONG, "a wave that took longer than this halves the next one");
  public static final ConfigKey SCHEDULER_WAVE_COMMIT_P99_MS = k("scheduler.wave.commit.p99.ms", "1000", DOUBLE, "a worker whose commit p99 (heartbeat) is above this gets no bigger wave");
  public static final ConfigKey SCHEDULER_WAVE_BACKLOG_PER_SLOT = k("scheduler.wave.backlog.per.slot", "200", DOUBLE, "a worker with more deliveries waiting per held slot (heartbeat mailbox) than this gets no bigger wave");
  public static final ConfigKey SCHEDULER_JOIN_WINDOW_MS = k("scheduler.join.window.ms", "300000", LONG, "a worker ACTIVE for less than this and below its fair share is joining: it gets scale-out waves, without the sources' cooldown");
  public static final ConfigKey SCHEDULER_MIN_WORKERS = k("scheduler.min.workers", "3", INT, "cold start: probes inspect non-critical devices at 25% rate, +25% per ACTIVE worker, until this many are ACTIVE");
  // issue 12 item 3 (D10): the fleet mode the leader decides and the probes follow
  public static final ConfigKey SCHEDULER_QUEUE_SAMPLE_MS = k("scheduler.queue.sample.ms", "5000", LONG, "how often every scheduler counts the messages ready in the slot queues (the API's backlog and the fleet mode's backlog signals)");
  public static final ConfigKey SCHEDULER_QUEUE_SAMPLE_FULL_MS = k("scheduler.queue.sample.full.ms", "60000", LONG, "how often the leader's queue sample asks the broker for every slot's queues; in between it counts 0 for the slots whose owners said in their last heartbeat that every lane consumes with room under its prefetch (nothing waits ready there), which spares an idle broker most of its passive declares; set it to scheduler.queue.sample.ms to ask for every queue every time");
  public static final ConfigKey SCHEDULER_FLEET_BACKLOG_HIGH = k("scheduler.fleet.backlog.high", "100000", LONG, "fleet mode: messages ready in all slot queues that enter BACKPRESSURE_HIGH");
  public static final ConfigKey SCHEDULER_FLEET_BACKLOG_CRITICAL = k("scheduler.fleet.backlog.critical", "1000000", LONG, "fleet mode: messages ready in all slot queues that enter BACKPRESSURE_CRITICAL (only critical devices inspected)");
  public static final ConfigKey SCHEDULER_FLEET_GROWTH_PER_S = k("scheduler.fleet.growth.per.s", "2000", DOUBLE, "fleet mode: backlog growth (messages/s between two queue samples) that enters BACKPRESSURE_HIGH when sustained");
  public static final ConfigKey SCHEDULER_FLEET_GROWTH_SAMPLES = k("scheduler.fleet.growth.samples", "3", INT, "fleet mode: consecutive queue samples the growth must hold before it counts");
  public static final ConfigKey SCHEDULER_FLEET_FAILING_WORKERS_PCT = k("scheduler.fleet.failing.workers.pct", "50", DOUBLE, "fleet mode: share (percent) of ACTIVE/DRAINING workers whose database errors rose since the last sample that enters BACKPRESSURE_HIGH (seed 000 scenario F)");
  public static final ConfigKey SCHEDULER_FLEET_FAILING_SAMPLES = k("scheduler.fleet.failing.samples", "2", INT, "fleet mode: consecutive queue samples that share of failing workers must hold before it counts (one failed batch is not an outage)");
  public static final ConfigKey SCHEDULER_FLEET_COMMIT_P99_HIGH_MS = k("scheduler.fleet.commit.p99.high.ms", "5000", DOUBLE, "fleet mode: a worker's commit p99 (from its heartbeat) that enters BACKPRESSURE_HIGH");
  public static final ConfigKey SCHEDULER_FLEET_COMMIT_P99_CRITICAL_MS = k("scheduler.fleet.commit.p99.critical.ms", "30000", DOUBLE, "fleet mode: a worker's commit p99 that enters BACKPRESSURE_CRITICAL");
  public static final ConfigKey SCHEDULER_FLEET_LEAVE_RATIO = k("scheduler.fleet.leave.ratio", "0.5", DOUBLE, "fleet mode hysteresis: a mode is left (one step down) only when every signal is below this fraction of its entry threshold; 0 < ratio < 1");
  public static final ConfigKey SCHEDULER_FLEET_MIN_DWELL_MS = k("scheduler.fleet.min.dwell.ms", "30000", LONG, "fleet mode: least time in a backpressure mode before stepping down from it (entering a more severe mode never waits)");
  public static final ConfigKey PROBE_MODE_POLL_MS = k("probe.mode.poll.ms", "2000", LONG, "how often a probe with probe.inventory.url reads the fleet mode from the scheduler (the authority; Redis brings changes sooner)");
  public static final ConfigKey PROBE_MODE_UNREACHABLE_MS = k("probe.mode.unreachable.ms", "8000", LONG, "a probe that has heard the fleet mode neither from the API nor from Redis for this long enters BACKPRESSURE_HIGH on its own");
  public static final ConfigKey PROBE_MODE_BROKER_DOWN_MS = k("probe.mode.broker.down.ms", "3000", LONG, "a probe without a RabbitMQ connection for this long enters BACKPRESSURE_HIGH on its own (critical devices keep their rate; the rest waits in the outbox)");
  public static final ConfigKey PROBE_MODE_OUTBOX_DEPTH_HIGH = k("probe.mode.outbox.depth.high", "100000", LONG, "probe's own mode: unconfirmed outbox rows that enter BACKPRESSURE_HIGH");
  public static final ConfigKey PROBE_MODE_OUTBOX_DEPTH_CRITICAL = k("probe.mode.outbox.depth.critical", "1000000", LONG, "probe's own mode: unconfirmed outbox rows that enter BACKPRESSURE_CRITICAL");
  public static final ConfigKey PROBE_MODE_OUTBOX_AGE_HIGH_MS = k("probe.mode.outbox.age.high.ms", "8000", LONG, "probe's own mode: age of the oldest unconfirmed outbox row that enters BACKPRESSURE_HIGH (8 s: a broker that stops confirming is seen within the 10 s issue 12 asks for)");
  public static final ConfigKey PROBE_MODE_OUTBOX_AGE_CRITICAL_MS = k("probe.mode.outbox.age.critical.ms", "600000", LONG, "probe's own mode: age of the oldest unconfirmed outbox row that enters BACKPRESSURE_CRITICAL");
  public static final ConfigKey PROBE_MODE_NACK_WINDOW_MS = k("probe.mode.nack.window.ms", "10000", LONG, "probe's own mode: a publish the broker refused (full queue) within this window keeps BACKPRESSURE_HIGH");
  public static final ConfigKey PROBE_MODE_MIN_DWELL_MS = k("probe.mode.min.dwell.ms", "10000", LONG, "probe's own mode: least time in a backpressure mode before stepping down (below half of each entry threshold)");
  public static final ConfigKey ALERT_OFFLINE_FAILURES_P1 = k("alert.offline.failures.p1", "3", INT, "critical devices: consecutive failed checks before device.offline fires (the HARD state, like Nagios max_check_attempts)");
  public static final ConfigKey ALERT_OFFLINE_FAILURES_P2 = k("alert.offline.failures.p2", "5", INT, "normal devices: consecutive failed checks before device.offline fires");
  public static final ConfigKey ALERT_OFFLINE_FAILURES_P3 = k("alert.offline.failures.p3", "10", INT, "low-priority devices: consecutive failed checks before device.offline fires");
  public static final ConfigKey ALERT_OFFLINE_SEVERITY_P1 = k("alert.offline.severity.p1", "4", INT, "severity of device.offline for critical devices (0 INFO .. 4 CRITICAL)");
  public static final ConfigKey ALERT_OFFLINE_SEVERITY_P2 = k("alert.offline.severity.p2", "3", INT, "severity of device.offline for normal devices");
  public static final ConfigKey ALERT_OFFLINE_SEVERITY_P3 = k("alert.offline.severity.p3", "2", INT, "severity of device.offline for low-priority devices");
  public static final ConfigKey ALERT_FLAP_LOW_PCT = k("alert.flap.low.pct", "25", DOUBLE, "flapping stops below this weighted percentage of state changes (Icinga default)");
  public static final ConfigKey ALERT_FLAP_HIGH_PCT = k("alert.flap.high.pct", "30", DOUBLE, "flapping starts above this weighted percentage of state changes; 100 turns flap detection off");
  public static final ConfigKey ALERT_FLAP_WINDOW = k("alert.flap.window", "21", INT, "results over which flapping is measured");

  public static final ConfigKey RETENTION_HISTORY_DAYS_HIGH = k("retention.history.days.high", "30", INT, "days of history kept for critical devices (priority 1, high queue); at least 7 (history is the dedup ledger)");
  public static final ConfigKey RETENTION_HISTORY_DAYS_NORMAL = k("retention.history.days.normal", "14", INT, "days of history kept for the other devices; at least 7");
  public static final ConfigKey RETENTION_ALERT_DAYS = k("retention.alert.days", "90", INT, "days of alert events kept");
  public static final ConfigKey RETENTION_ROLLUP_DAYS = k("retention.rollup.days", "90", INT, "days of per-minute rollups kept");
  public static final ConfigKey RETENTION_AHEAD_DAYS = k("retention.ahead.days", "3", INT, "day partitions created this far ahead");
  public static final ConfigKey RETENTION_CHECK_MS = k("retention.check.ms", "3600000", LONG, "how often the leader creates partitions ahead and drops expired ones (also at election)");
  public static final ConfigKey API_TOKEN = k("api.token", "", STRING, "SECRET: the operator token for the API (header Authorization: Bearer <token>; reads and changes); required by the scheduler role unless demo.mode; prefer INSPECT_API_TOKEN (e.g. openssl rand -hex 32)");
  public static final ConfigKey CONSOLE_USER = k("console.user", "operator", STRING, "user name of the console login");
  public static final ConfigKey CONSOLE_PASSWORD = k("console.password", "", STRING, "SECRET: password of the console login (at least 12 characters), or its PBKDF2 hash pbkdf2$ITERATIONS$SALT$HASH (java -cp node.jar dev.inspection.admin.PasswordHash reads a password on stdin and prints one); kept only as a slow hash in memory; required unless demo.mode; prefer INSPECT_CONSOLE_PASSWORD");
  public static final ConfigKey DEMO_MODE = k("demo.mode", "false", BOOL, "demo only: generate a random API token and console password when none is set and print them once at start, allow the services' default accounts, add 10000 simulated devices unless probe.sim.devices is given (1 % of them flapping: probe.sim.flap.pct) and 40 simulated hotel rooms pushing frames (probe.sim.push.rooms)");
  public static final ConfigKey SECURITY_ALLOW_INSECURE_CREDENTIALS = k("security.allow.insecure.credentials", "false", BOOL, "outside demo.mode a node refuses rabbit.user=guest and a PostgreSQL superuser as pg.user; true allows them (local tests, drills and benchmarks only)");
  // issue 10 (HTTP surface): roles, probe credentials, sessions, login throttling, body limits
  public static final ConfigKey API_READ_TOKEN = k("api.read.token", "", STRING, "SECRET: optional read-only API token (reads everything, every mutation answers 403); empty = none; at least 16 characters");
  public static final ConfigKey API_PROBE_TOKENS = k("api.probe.tokens", "", STRING, "SECRET: what the scheduler accepts on /api/v1/probe/*: group=token pairs separated by commas (a token serves its group only; the group * serves every group); empty = the probe routes answer 401; tokens at least 16 characters");
  public static final ConfigKey PROBE_API_TOKEN = k("probe.api.token", "", STRING, "SECRET: the token this probe sends to probe.inventory.url (its group's token in the scheduler's api.probe.tokens); prefer INSPECT_PROBE_API_TOKEN");
  public static final ConfigKey CONSOLE_READONLY_USER = k("console.readonly.user", "", STRING, "optional read-only console login (sees everything, changes nothing); empty = none");
  public static final ConfigKey CONSOLE_READONLY_PASSWORD = k("console.readonly.password", "", STRING, "SECRET: password of console.readonly.user (at least 12 characters, or a pbkdf2$... hash like console.password)");
  public static final ConfigKey CONSOLE_SESSIONS_MAX = k("console.sessions.max", "200", INT, "most live console sessions; a login beyond it answers 503 until a session ends (logout or idle expiry)");
  public static final ConfigKey CONSOLE_SESSION_IDLE_MS = k("console.session.idle.ms", "1800000", LONG, "a console session unused this long ends (the next request goes to the login page)");
  public static final ConfigKey CONSOLE_LOGIN_FREE_FAILURES = k("console.login.free.failures", "5", INT, "failed logins per user name and per address before each further failure doubles a wait (from 1 s); a login during the wait answers 429 with Retry-After");
  public static final ConfigKey CONSOLE_LOGIN_MAX_DELAY_MS = k("console.login.max.delay.ms", "900000", LONG, "cap of that wait");
  public static final ConfigKey PROBE_INGEST_TOKENS = k("probe.ingest.tokens", "", STRING, "SECRET: tokens the gateways and devices of this probe's group push frames with (POST /ingest/v1/{profile}, Authorization: Bearer), separated by commas (two while one is rotated out); each at least 16 characters; empty = every push answers 401; prefer INSPECT_PROBE_INGEST_TOKENS_FILE");
  public static final ConfigKey PROBE_INGEST_MAX_BYTES = k("probe.ingest.max.bytes", "1048576", LONG, "largest body of a push (POST /ingest/v1/{profile}); larger answers 413");
  public static final ConfigKey PROBE_INGEST_MAX_FRAMES = k("probe.ingest.max.frames", "1000", INT, "most frames in one push; more answers 400");
  public static final ConfigKey PROBE_INGEST_RATE_PER_S = k("probe.ingest.rate.per.s", "5000", INT, "frames per second this probe takes by push (a token bucket holding one second's worth); a push beyond it answers 429 with Retry-After");
  public static final ConfigKey HTTP_BODY_MAX_BYTES = k("http.body.max.bytes", "65536", LONG, "largest body of an API mutation other than the import (PATCH, drain, ack, replay, ...); larger answers 413");
  public static final ConfigKey HTTP_IMPORT_MAX_BYTES = k("http.import.max.bytes", "33554432", LONG, "largest body of POST /api/v1/devices/import (parsed off the event loop); larger answers 413");
  public static final ConfigKey SHUTDOWN_GRACE_MS = k("shutdown.grace.ms", "25000", LONG, "on SIGTERM, how long the node may take to finish batches, flush the outbox and hand back leases");
  public static final ConfigKey BACKOFF_INITIAL_MS = k("backoff.initial.ms", "200", LONG, "first reconnect / retry delay after a failure");
  public static final ConfigKey LOG_FORMAT = k("log.format", "text", STRING, "text | json: the console log format. text: one line per event with ISO-8601 time (date and zone), level, thread, logger, node/role; json: one JSON object per line with timestamp (ISO-8601 with zone), level, logger, thread, message, node, role, the MDC and key-value fields (slot, the access log's method/path/status...) and exception (the whole stack as one string). The level: environment variable LOG_LEVEL (README Logs)");
  public static final ConfigKey BACKOFF_MAX_MS = k("backoff.max.ms", "10000", LONG, "cap of the reconnect / retry delay (jittered)");

  public static final List<ConfigKey> ALL = List.of(
      ROLE, NODE_ID, DATA_DIR, HTTP_HOST, HTTP_PORT, HTTP_ADVERTISED_URL, HTTP_TLS_CERT, HTTP_TLS_KEY,
      PG_HOST, PG_PORT, PG_DATABASE, PG_USER, PG_PASSWORD, PG_SCHEMA, PG_MIGRATE, PG_POOL_SIZE, PG_IDLE_TX_TIMEOUT_MS, PG_SSL_MODE, PG_TLS_CA,
      RABBIT_HOST, RABBIT_PORT, RABBIT_ADDRESSES, RABBIT_USER, RABBIT_PASSWORD, RABBIT_VHOST, RABBIT_SSL, RABBIT_TLS_CA, RABBIT_MANAGEMENT_URL, RABBIT_MANAGEMENT_USER, RABBIT_MANAGEMENT_PASSWORD,
      REDIS_URL, REDIS_CHANNEL_PREFIX,
      SLOTS_TOTAL, RESHARD_EFFECTIVE_AFTER_MS, RESHARD_WINDOW_END_MS, TOPOLOGY_PREFIX, BROKER_QUEUE_BUDGET_BYTES, BROKER_QUEUE_HIGH_WEIGHT, QUEUE_LOW_MAX_BYTES, QUEUE_LOW_MAX_LENGTH, QUEUE_LOW_TYPE, QUEUE_DELIVERY_LIMIT,
      PROBE_GROUP, PROBE_SIM_DEVICES, PROBE_SIM_FAIL_RATE, PROBE_SIM_FLAP_PCT, PROBE_SIM_PUSH_ROOMS, PROBE_SIM_PUSH_INTERVAL_MS, PROBE_INTERVAL_MS, PROBE_JITTER_PCT, PROBE_LOOK_GATHER_MS,
      PROBE_INVENTORY_FILE, PROBE_INVENTORY_URL, PROBE_INVENTORY_REFRESH_MS, PROBE_PACING_REFRESH_MS, PROBE_SLOT_MAP_REFRESH_MS, PROBE_PACING_START, PROBE_CHECK_TIMEOUT_MS,
      PROBE_CHECKS_MAX_INFLIGHT, PROBE_HTTP_MAX_BODY_BYTES, PROBE_TARGET_ALLOW, PROBE_TARGET_DENY,
      OUTBOX_COMMIT_MAX_ROWS, OUTBOX_PUBLISH_CHANNELS, OUTBOX_MAX_INFLIGHT, OUTBOX_PUBLISH_BATCH_MAX, OUTBOX_PUBLISH_BATCH_BYTES, OUTBOX_PUBLISH_GATHER_MS, OUTBOX_PUBLISH_GATHER_ROWS, OUTBOX_PUBLISH_GATHER_BUSY_PER_S, OUTBOX_PUBLISH_GATHER_BUSY_MS, OUTBOX_REPLAY_INTERVAL_MS, OUTBOX_REPLAY_MIN_AGE_MS, OUTBOX_MAX_ROWS, OUTBOX_MAX_BYTES, OUTBOX_MIN_FREE_BYTES, OUTBOX_SHED_REPORT_MS, OUTBOX_RETENTION_MS,
      WORKER_PREFETCH_HIGH, WORKER_PREFETCH_NORMAL, WORKER_PREFETCH_LOW, WORKER_CONSUMER_OPEN_THREADS, WORKER_LANE_WEIGHT_HIGH, WORKER_LANE_WEIGHT_NORMAL, WORKER_LANE_WEIGHT_LOW,
      WORKER_LANE_FILL_BESIDE_HIGH, WORKER_LANE_STARVATION_MS, WORKER_BATCH_MAX, WORKER_COMMIT_TAKE_ALONG, WORKER_GENERIC_PLAN_MAX_RESULTS, WORKER_SNAPSHOT_LAYOUT, WORKER_BATCH_LINGER_MS, WORKER_MERGE_WINDOW_MS_BY_PROFILE, WORKER_MAX_MESSAGE_BYTES, WORKER_MAX_BATCH_BYTES,
      WORKER_MAX_FUTURE_SKEW_MS, WORKER_DB_RETRIES, WORKER_POISON_MAX_SPLIT_COMMITS, WORKER_DEGRADED_ENABLED, WORKER_DEGRADED_WINDOW_MS, WORKER_DEGRADED_MIN_COMMITS,
      WORKER_DEGRADED_ENTER_FAILURE_RATIO, WORKER_DEGRADED_ENTER_P99_MS, WORKER_DEGRADED_EXIT_FAILURE_RATIO, WORKER_DEGRADED_EXIT_P99_MS,
      WORKER_DEGRADED_DWELL_MS, WORKER_DEGRADED_TICK_MS, WORKER_BACKFILL_BATCH, WORKER_BACKFILL_INTERVAL_MS, WORKER_LEASE_TTL_MS, WORKER_HEARTBEAT_MS, WORKER_LEASE_POLL_MS,
      WORKER_SUSPECT_AFTER_MS, WORKER_DEAD_AFTER_MS, WORKER_WARMUP_MS, WORKER_QUARANTINE_MS, WORKER_SNAPSHOT_PAGE, WORKER_DIRECTORY_TTL_MS, WORKER_DIRECTORY_MAX_DEVICES, WORKER_FAULT_FREEZE_HEARTBEAT_AFTER_MS,
      HISTORY_POLICY, HISTORY_POLICY_BY_PROFILE, HISTORY_HEARTBEAT_MS, HISTORY_IGNORED_FIELDS,
      SCHEDULER_TICK_MS, SCHEDULER_ELECTION_MS, SCHEDULER_LEADER_SESSION_TIMEOUT_MS, SCHEDULER_LEADER_GRACE_MS, SCHEDULER_LEASE_EXPIRY_GRACE_MS,
      SCHEDULER_MOVE_TIMEOUT_MS, SCHEDULER_LOCK_TIMEOUT_MS, SCHEDULER_DRAIN_BATCH, SCHEDULER_REBALANCE_INTERVAL_MS, SCHEDULER_DEVICE_COUNT_INTERVAL_MS, SCHEDULER_REBALANCE_THRESHOLD,
      SCHEDULER_REBALANCE_MAX_MOVES, SCHEDULER_COOLDOWN_SLOT_MS, SCHEDULER_COOLDOWN_SOURCE_MS, SCHEDULER_WEIGHT_DEVICES, SCHEDULER_WEIGHT_RATE,
      SCHEDULER_WEIGHT_BACKLOG, SCHEDULER_WEIGHT_PROCESS_MS, SCHEDULER_WEIGHT_CRITICAL, SCHEDULER_WAVE_FIRST, SCHEDULER_WAVE_MIN,
      SCHEDULER_WAVE_MAX, SCHEDULER_WAVE_FAST_MS, SCHEDULER_WAVE_SLOW_MS, SCHEDULER_WAVE_COMMIT_P99_MS, SCHEDULER_WAVE_BACKLOG_PER_SLOT,
      SCHEDULER_JOIN_WINDOW_MS, SCHEDULER_MIN_WORKERS,
      SCHEDULER_QUEUE_SAMPLE_MS, SCHEDULER_QUEUE_SAMPLE_FULL_MS, SCHEDULER_FLEET_BACKLOG_HIGH, SCHEDULER_FLEET_BACKLOG_CRITICAL, SCHEDULER_FLEET_GROWTH_PER_S, SCHEDULER_FLEET_GROWTH_SAMPLES,
      SCHEDULER_FLEET_FAILING_WORKERS_PCT, SCHEDULER_FLEET_FAILING_SAMPLES, SCHEDULER_FLEET_COMMIT_P99_HIGH_MS, SCHEDULER_FLEET_COMMIT_P99_CRITICAL_MS, SCHEDULER_FLEET_LEAVE_RATIO,
      SCHEDULER_FLEET_MIN_DWELL_MS, PROBE_MODE_POLL_MS, PROBE_MODE_UNREACHABLE_MS, PROBE_MODE_BROKER_DOWN_MS, PROBE_MODE_OUTBOX_DEPTH_HIGH, PROBE_MODE_OUTBOX_DEPTH_CRITICAL,
      PROBE_MODE_OUTBOX_AGE_HIGH_MS, PROBE_MODE_OUTBOX_AGE_CRITICAL_MS, PROBE_MODE_NACK_WINDOW_MS, PROBE_MODE_MIN_DWELL_MS,
      ALERT_OFFLINE_FAILURES_P1, ALERT_OFFLINE_FAILURES_P2, ALERT_OFFLINE_FAILURES_P3, ALERT_OFFLINE_SEVERITY_P1, ALERT_OFFLINE_SEVERITY_P2,
      ALERT_OFFLINE_SEVERITY_P3, ALERT_FLAP_LOW_PCT, ALERT_FLAP_HIGH_PCT, ALERT_FLAP_WINDOW,
      RETENTION_HISTORY_DAYS_HIGH, RETENTION_HISTORY_DAYS_NORMAL, RETENTION_ALERT_DAYS, RETENTION_ROLLUP_DAYS, RETENTION_AHEAD_DAYS, RETENTION_CHECK_MS,
      API_TOKEN, CONSOLE_USER, CONSOLE_PASSWORD, DEMO_MODE, SECURITY_ALLOW_INSECURE_CREDENTIALS,
      API_READ_TOKEN, API_PROBE_TOKENS, PROBE_API_TOKEN, CONSOLE_READONLY_USER, CONSOLE_READONLY_PASSWORD, CONSOLE_SESSIONS_MAX,
      CONSOLE_SESSION_IDLE_MS, CONSOLE_LOGIN_FREE_FAILURES, CONSOLE_LOGIN_MAX_DELAY_MS, HTTP_BODY_MAX_BYTES, HTTP_IMPORT_MAX_BYTES,
      PROBE_INGEST_TOKENS, PROBE_INGEST_MAX_BYTES, PROBE_INGEST_MAX_FRAMES, PROBE_INGEST_RATE_PER_S,
      SHUTDOWN_GRACE_MS, BACKOFF_INITIAL_MS, BACKOFF_MAX_MS, LOG_FORMAT);

  public static final Map<String, ConfigKey> BY_NAME;
  static {
    Map<String, ConfigKey> m = new LinkedHashMap<>();
    for (ConfigKey key : ALL) m.put(key.name(), key);
    BY_NAME = Map.copyOf(m);
  }

  private static ConfigKey k(String name, String def, ConfigKey.Type type, String help) {
    return new ConfigKey(name, def, type, help);
  }
}
