package dev.inspection.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.core.metrics.Info;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** The node's metrics, named once here; served in Prometheus format at {@code /metrics}. */
public final class Metrics {
  private final MeterRegistry registry;
  private final PrometheusMeterRegistry prometheus;
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();
  private final Counter published;
  private final Counter confirmed;
  private final Counter nacked;
  private final Counter returned;
  private final Counter replayed;
  private final Counter publishedMessages;
  private final Counter outboxAppended;
  private final DistributionSummary batchSize;
  private final CommitLatency commitLatency;
  private final Latency lag;

  private final NodeMeters node;
  private final SlotGauges slots;
  private final Timer[] lagByPriority = new Timer[3];
  private SlotMoves moves;
  private volatile long lastNackAtMs = -1;

  private Metrics(MeterRegistry registry, PrometheusMeterRegistry prometheus) {
    this.registry = registry;
    this.prometheus = prometheus;
    node = new NodeMeters(registry);
    slots = new SlotGauges(registry);
    published = Counter.builder("outbox_published_total").description("results published (first sends and replays)").register(registry);
    publishedMessages = Counter.builder("outbox_messages_total").description("AMQP messages published; fewer than results when they go as v3 batches").register(registry);
    confirmed = Counter.builder("outbox_confirms_total").description("publishes acked by the broker").register(registry);
    nacked = Counter.builder("outbox_nacks_total").description("publishes refused by the broker (e.g. queue full); the rows stay in the outbox").register(registry);
    returned = Counter.builder("outbox_returns_total").description("publishes returned as unroutable; the rows stay in the outbox").register(registry);
    replayed = Counter.builder("outbox_replayed_total").description("unconfirmed rows published again").register(registry);
    outboxAppended = Counter.builder("outbox_appended_total").description("results written to the outbox").register(registry);
    batchSize = DistributionSummary.builder("worker_batch_size").description("messages per committed batch").register(registry);
    commitLatency = new CommitLatency(registry);
    lag = new Latency(registry, "worker_probe_to_commit_lag", "collected_at to commit", Duration.ofMinutes(1), b -> b);
    String[] wire = {"high", "normal", "low"};
    for (int i = 0; i < 3; i++) {
      lagByPriority[i] = Latency.histogramBuilder("worker_priority_lag", "collected_at to commit, by the result's priority (buckets: aggregate across workers)").tag("priority", wire[i]).register(registry);
    }
  }

  /** A registry without node tags (unit tests). */
  public static Metrics prometheus() {
    PrometheusMeterRegistry r = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    return new Metrics(r, r);
  }

  /** A node's registry: every meter carries {@code node} and {@code role}, so a dashboard can tell nodes and roles apart. */
  public static Metrics prometheus(String nodeId, String role) {
    PrometheusMeterRegistry r = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    r.config().commonTags("node", nodeId, "role", role);
    return new Metrics(r, r);
  }

  /** A Vert.x builder whose own metrics (pools, HTTP server) go to this registry. */
  public io.vertx.core.VertxBuilder vertxBuilder(io.vertx.core.VertxOptions options) {
    return NodeMeters.vertxBuilder(registry, options);
  }

  /** Samples the event-loop delay of this Vert.x until {@link #close()}. */
  public void watchEventLoop(io.vertx.core.Vertx vertx) {
    node.watch(vertx);
  }

  public void close() {
    node.close();
  }

  /** Per-slot backlog (scheduler) and lag (worker) gauges. */
  public SlotGauges slots() {
    return slots;
  }

  /** The worker's timers of a slot changing owners (registered on first use: other roles never show them). */
  public synchronized SlotMoves moves() {
    if (moves == null) moves = new SlotMoves(registry);
    return moves;
  }

  public String scrape() {
    return prometheus == null ? "" : prometheus.scrape();
  }

  public MeterRegistry registry() {
    return registry;
  }

  private void gauge(String name, String description, Supplier<Number> value) {
    Gauge.builder(name, value).description(description).register(registry);
  }

  /** The probe's gauges; each supplier reads a value the probe publishes (never a collection another thread changes). */
  public void probeGauges(Supplier<Number> outboxDepth, Supplier<Number> outboxOldestAgeSeconds, Supplier<Number> devices) {
    gauge("outbox_depth", "outbox rows not yet confirmed by the broker", outboxDepth);
    gauge("outbox_oldest_age_seconds", "age of the oldest unconfirmed outbox row", outboxOldestAgeSeconds);
    gauge("probe_devices", "devices this probe inspects", devices);
  }

  /** The probe's outbox storage (issue 12): bytes its file uses, bytes free for it (disk plus the file's free pages). */
  public void outboxStorageGauges(Supplier<Number> usedBytes, Supplier<Number> freeBytes) {
    gauge("probe_outbox_bytes", "bytes the outbox file uses (used pages and WAL)", usedBytes);
    gauge("probe_outbox_free_bytes", "bytes free for the outbox: the disk's usable space plus the file's free pages", freeBytes);
  }

  /** Results shed from the outbox at its watermarks, by device priority (1 critical, 2 normal, 3 low). */
  public void outboxShed(int priority, int n) {
    counter("probe_outbox_shed_total", "results shed from the outbox at its watermarks (recorded per device-minute), by device priority", "priority", Integer.toString(priority)).increment(n);
  }

  /** Results of an outbox append that failed (disk full, I/O error): never durable, never published. */
  public void outboxAppendFailed(int n) {
    counter("probe_outbox_append_failures_total", "results whose outbox append failed (disk full, fsync/I/O error); dropped, never published").increment(n);
  }

  /** The worker's gauges; each supplier reads a value the worker publishes. */
  public void workerGauges(Supplier<Number> slotsHeld, Supplier<Number> mailboxMessages, Supplier<Number> leaseCacheAgeMs) {
    gauge("worker_slots_held", "slots this worker consumes", slotsHeld);
    counter("worker_db_errors_total", DB_ERRORS); // at zero from the start: the commit-errors alert needs the series
    gauge("worker_mailbox_messages", "deliveries waiting in this worker's slot mailboxes", mailboxMessages);
    gauge("worker_lease_cache_age_ms", "age of the newest lease read from PostgreSQL (INV-15; batches also check the lease in their transaction)", leaseCacheAgeMs);
  }

  /**
   * {@code build_info{version, commit}} = 1: which build each node runs (e.g. during a rolling upgrade). A
   * Prometheus info metric registered on the Prometheus registry itself: Micrometer would drop the _info suffix.
   */
  public void buildInfo(String version, String commit) {
    if (prometheus == null) return;
    Info.builder().name("build_info").help("always 1; the labels say the version and git commit this node was built from")
        .labelNames("version", "commit").register(prometheus.getPrometheusRegistry()).setLabelValues(version, commit);
  }

  public void schedulerGauges(Supplier<Number> isLeader, Supplier<Number> term) {
    gauge("scheduler_is_leader", "1 while this node leads the control plane", isLeader);
    gauge("scheduler_term", "the leader term this node holds (-1 when following)", term);
  }

  public void outboxAppended(int n) {
    outboxAppended.increment(n);
  }

  public void published(int results, int messages) {
    published.increment(results);
    publishedMessages.increment(messages);
  }

  public void publishConfirmed(int n) {
    confirmed.increment(n);
  }

  public void publishNacked(int n) {
    nacked.increment(n);
    lastNackAtMs = System.currentTimeMillis();
  }

  /** When the broker last refused a publish (epoch ms; -1: never): the probe's own mode reads it (probe.mode.nack.window.ms). */
  public long lastNackAtMs() {
    return lastNackAtMs;
  }

  public void publishReturned(int n) {
    returned.increment(n);
  }

  public void replayed(int n) {
    replayed.increment(n);
  }

  private Counter counter(String name, String description, String... tags) {
    String key = name + String.join(",", tags);
    return counters.computeIfAbsent(key, k -> Counter.builder(name).description(description).tags(tags).register(registry));
  }

  public void consumed(int slot, int n) {
    counter("worker_consumed_total", "deliveries received per slot", "slot", Integer.toString(slot)).increment(n);
  }

  public void redelivered(int slot) {
    counter("worker_redelivered_total", "deliveries the broker marked as redelivered (a crash, a fence or a requeue; a graceful move causes none)").increment();
  }

  /** The broker closed one of a slot's channels or cancelled a consumer while the connection lived on: the slot's consumers opened again. */
  public void channelsBroken(int slot) {
    counter("worker_channels_broken_total", "times the broker closed a slot's channel or cancelled its consumer on a live connection (the slot's consumers are opened again)").increment();
  }

  public void committed(int slot, int n) {
    counter("worker_committed_total", "messages committed and acked per slot", "slot", Integer.toString(slot)).increment(n);
  }

  /** Settle calls sent (acks, multiple acks, requeues: far fewer than deliveries) and not sent ({@code refused}: worker/ChannelTags). */
  public void ackCalls(int n, int refused) {
    counter("worker_ack_calls_total", "basicAck/basicNack calls the worker made (one multiple ack settles a channel's part of a batch)").increment(n);
    if (refused > 0) counter("worker_ack_refused_total", "acks/nacks not sent: they named a delivery tag the channel does not hold (the broker would close the channel; the log says why)").increment(refused);
  }

  public void fenced(int slot, int n) {
    counter("worker_fenced_total", "messages whose batch was rejected because the slot's lease moved (D1)", "slot", Integer.toString(slot)).increment(n);
  }

  public void deadLettered(String reason) {
    if (reason.equals("forwarded")) {
      counter("worker_reshard_forwarded_total", "results of an older slot map version sent on to the slot their device moved to (a reshard's grace window)").increment();
      return;
    }
    counter("worker_dead_letters_total", "messages dead-lettered by the worker, by reason", "reason", reason).increment();
  }

  public void dbErrors() {
    counter("worker_db_errors_total", DB_ERRORS).increment();
  }

  private static final String DB_ERRORS = "batches that failed on a database error and were requeued";

  /** Commits spent splitting batch transactions that PostgreSQL refused with a data error, to isolate the refused rows (D9). */
  public void poisonSplitCommits(int n) {
    counter("worker_poison_splits_total", "commits made to split batch transactions PostgreSQL refused with a data error (D9)").increment(n);
  }

  /** A device whose results PostgreSQL refused (found by a split): they are dead-lettered as db_rejected. */
  public void dbRejected(String sqlState) {
    counter("worker_db_rejected_total", "devices whose results PostgreSQL refused with a data error, dead-lettered as db_rejected, by SQLSTATE",
        "sqlstate", sqlState == null ? "none" : sqlState).increment();
  }

  /** A batch transaction tried again after a serialization failure, deadlock or lock timeout (not an outage). */
  public void dbRetried() {
    counter("worker_db_retries_total", "batch transactions tried again after a serialization failure, deadlock or lock timeout").increment();
  }

  /** 1 while this worker is in the DB-degraded write mode (seed 000 §7.5); the reason is in the log, /health/ready and the heartbeat. */
  public void degradedGauge(Supplier<Number> degraded) {
    gauge("worker_degraded", "1 while this worker writes in the DB-degraded mode (current, derived state, alerts, critical history; the rest spilled)", degraded);
  }

  public void degradedChange(String to) {
    counter("worker_degraded_changes_total", "changes of this worker's DB-degraded write mode, by the mode entered", "to", to).increment();
  }

  /** Results whose history and rollup rows were held back in the degraded mode and published to the back-fill queue (confirmed). */
  public void spilled(int results) {
    counter("worker_spilled_total", "results whose history/rollup rows went to the back-fill queue in the degraded mode or while history was locked (confirmed by the broker)").increment(results);
  }

  /** Held-back results written straight into history because their spill could not be published. */
  public void spillWrittenThrough(int results) {
    counter("worker_spill_written_through_total", "degraded-mode results written into history at once because the spill publish failed").increment(results);
  }

  /** Spilled results written into history and rollups after recovery. */
  public void backfilled(int results) {
    counter("worker_backfilled_total", "spilled results written into history and rollups by the back-fill (each spilled batch once per commit)")
        .increment(results);
  }

  public void backfillDepthGauge(Supplier<Number> messages) {
    gauge("worker_backfill_queue_depth", "spilled batches waiting in the back-fill queue, as last seen by this worker's back-fill (-1: not read yet)", messages);
  }

  public void leaseChange(String kind) {
    counter("worker_lease_changes_total", "slots gained or lost by this worker", "kind", kind).increment();
  }

  /** A batch of {@code size} results committed at {@code atMs} (epoch ms), {@code commitNanos} after it was due. */
  public void batch(int size, long commitNanos, long atMs) {
    batchSize.record(size);
    commitLatency.record(commitNanos, atMs);
  }

  /** The worker's commit latency: the exported percentiles and the heartbeat's recent p99. */
  public CommitLatency commitLatency() {
    return commitLatency;
  }

  /** One result's collected_at to commit; {@code devicePriority} 1 high, 2 normal, 3 low. */
  public void lagMillis(int devicePriority, long ms) {
    lag.record(Math.max(0, ms), TimeUnit.MILLISECONDS);
    lagByPriority[Math.min(3, Math.max(1, devicePriority)) - 1].record(Math.max(0, ms), TimeUnit.MILLISECONDS);
  }

  public void workerTransition(String from, String to) {
    counter("scheduler_worker_transitions_total", "worker state changes made by the leader or the worker itself", "from", from, "to", to).increment();
  }

  public void slotTransition(String from, String to) {
    counter("scheduler_slot_transitions_total", "slot lease state changes", "from", from, "to", to).increment();
  }

  public void retention(int created, int dropped) {
    counter("retention_partitions_created_total", "day partitions created ahead of time").increment(created);
    counter("retention_partitions_dropped_total", "day partitions dropped past their retention (never a DELETE)").increment(dropped);
  }

  public void leaderElected() {
    counter("scheduler_leader_elections_total", "times this node became the scheduler leader").increment();
  }

  public void leaderDeposed() {
    counter("scheduler_leader_step_downs_total", "times this node stopped leading (lost its lock session or found a newer term)").increment();
  }

  public void livenessFreed() {
    counter("scheduler_liveness_watch_freed_total", "worker liveness locks the leader's watch found free (a worker process gone); a round then checks").increment();
  }

  private final Map<String, Latency> timers = new ConcurrentHashMap<>();

  public void waveArrived(long millis) {
    time("scheduler_wave", "time from sending a wave of slots to a worker (cold start, scale-out) until every one of them was ACTIVE on it", millis);
  }

  /** A duration with p50/p99. */
  private void time(String name, String description, long millis) {
    timers.computeIfAbsent(name, n -> new Latency(registry, n, description, Duration.ofMinutes(5), b -> b)).record(millis, TimeUnit.MILLISECONDS);
  }

  /**
   * A mode and the cause of its last change as gauges (issue 12): {@code name{…tags, mode, cause}} is 1 for
   * the current pair and 0 for every pair held before; {@code name_level} is the mode's severity (0, 1, 2).
   */
  public ModeGauge modeGauge(String name, String description, String... tags) {
    return new ModeGauge(registry, name, description, tags);
  }

  /** A mode change, counted by the new mode and its cause. */
  public void modeChanged(String name, String to, String cause, String... tags) {
    String[] all = java.util.Arrays.copyOf(tags, tags.length + 4);
    all[tags.length] = "to";
    all[tags.length + 1] = to;
    all[tags.length + 2] = "cause";
    all[tags.length + 3] = cause;
    counter(name, "mode changes by the new mode and its cause", all).increment();
  }

  /** A check the probe ran (its result goes to the outbox), by device priority: the inspection rate per priority (issue 12 drills). */
  /** Per device priority 1..3 (index 0: any other value), looked up once: these count every check. */
  private final Counter[] checked = new Counter[4];
  private final Counter[] skippedByMode = new Counter[4];

  public void probeChecked(int priority) {
    int i = priority >= 1 && priority <= 3 ? priority : 0;
    if (checked[i] == null) {
      checked[i] = counter("probe_checks_total", "checks this probe ran (results made), by device priority (1 critical, 2 normal, 3 low)", "priority",
          Integer.toString(priority));
    }
    checked[i].increment();
  }

  /** {@code n} inspections a backpressure mode skipped (issue 12), by device priority (0: one outside 1-3); the probe adds them once a second. */
  public void inspectionsSkipped(int priority, long n) {
    int i = priority >= 1 && priority <= 3 ? priority : 0;
    if (skippedByMode[i] == null) {
      skippedByMode[i] = counter("probe_mode_skipped_total", "inspections skipped by the effective backpressure mode, by device priority", "priority",
          Integer.toString(priority));
    }
    skippedByMode[i].increment(n);
  }

  /** The sum of the counters of this name with these tags (all slots, all reasons, ... for the tags not given). */
  public double count(String name, String... tags) {
    return registry.find(name).tags(tags).counters().stream().mapToDouble(Counter::count).sum();
  }

  /**
   * One lane's part of a batch the worker took (issue 12): how many deliveries, the age of the oldest since
   * its collected_at, and how many were taken only because they starved (over worker.lane.starvation.ms).
   */
  public void laneTaken(String lane, int taken, long oldestAgeMs, int starved) {
    counter("worker_lane_taken_total", "deliveries taken into batches per lane (high, normal, low)", "lane", lane).increment(taken);
    if (starved > 0) {
      counter("worker_lane_starvation_takes_total", "deliveries taken only because they were older than worker.lane.starvation.ms", "lane", lane)
          .increment(starved);
    }
    timers.computeIfAbsent("worker_lane_oldest_taken_age:" + lane, k -> new Latency(registry, "worker_lane_oldest_taken_age",
            "per batch, age since collected_at of the oldest delivery a lane gave to it", Duration.ofMinutes(1), b -> b.tag("lane", lane)))
        .record(Math.max(0, oldestAgeMs), TimeUnit.MILLISECONDS);
  }
}
