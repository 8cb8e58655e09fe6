package dev.inspection.outbox;

import dev.inspection.common.HealthCheck;
import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import dev.inspection.metrics.Metrics;
import io.micrometer.core.instrument.Counter;
import io.vertx.core.Future;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the outbox inside its watermarks and says when it cannot write (issue 12 items 4 and 6). Every
 * second the probe hands it the unconfirmed row count: over a byte watermark it first deletes confirmed rows
 * kept for the retention ({@link #freeConfirmed}); still over a watermark, it sheds what {@link ShedPolicy}
 * picks, counts it per priority ({@code probe_outbox_shed_total{priority}}) and logs it. A failed append
 * (disk full, an fsync error) is counted ({@code probe_outbox_append_failures_total}), logged, and turns
 * the probe not-ready with the reason until an append succeeds again; what was durable before stays and
 * keeps being published. Runs on the probe's context; the outbox does the I/O on its own thread.
 */
public final class OutboxGuard implements HealthCheck {
  private static final Logger log = LoggerFactory.getLogger(OutboxGuard.class);
  /** Once over a watermark, shed down to this fraction of it. */
  static final double TARGET = 0.9;

  private final OutboxShed shed;
  private final Metrics metrics;
  private final Clock clock;
  private final ShedPolicy.Limits limits;
  private final OutboxCleaner cleaner;
  private final Counter retentionCut;
  /** The retention-cut warning: at most one per this, with the count since the last one (it recurs while the rate lasts). */
  static final long CUT_WARNING_EVERY_MS = 600_000;
  private boolean warnedCut;
  private long lastCutWarningMs;
  private long cutSinceWarning;
  private final AtomicLong usedBytes = new AtomicLong();
  private final AtomicLong freeBytes = new AtomicLong();
  private boolean checking;
  /** Results of failed appends per (device, minute, priority; count 0 as the key), until the ledger takes them. */
  private final Map<OutboxShed.Entry, Long> dropped = new HashMap<>();
  private static final int MAX_DROPPED_KEYS = 100_000;
  private boolean recording;
  private volatile String failure;

  /** {@code cleaner}: deletes confirmed rows ahead of their retention when the byte watermarks need the room. */
  public OutboxGuard(OutboxShed shed, OutboxCleaner cleaner, Metrics metrics, Clock clock, ShedPolicy.Limits limits) {
    this.shed = shed;
    this.cleaner = cleaner;
    this.metrics = metrics;
    this.clock = clock;
    this.limits = limits;
    this.retentionCut = Counter.builder("probe_outbox_retention_cut_total")
        .description("confirmed outbox rows deleted before outbox.retention.ms had passed, to keep the outbox under its byte watermarks")
        .register(metrics.registry());
    metrics.outboxStorageGauges(usedBytes::get, freeBytes::get);
  }

  public static ShedPolicy.Limits limits(Config c) {
    return new ShedPolicy.Limits(c.getLong(Keys.OUTBOX_MAX_ROWS), c.getLong(Keys.OUTBOX_MAX_BYTES), c.getLong(Keys.OUTBOX_MIN_FREE_BYTES), TARGET);
  }

  /** One round: measure, and shed if a watermark is crossed. {@code inFlight}: rows the publisher has out (never shed). */
  public Future<Integer> check(long unconfirmedRows, Set<Long> inFlight) {
    if (checking) return Future.succeededFuture(0);
    checking = true;
    return measure(unconfirmedRows)
        .compose(u -> ShedPolicy.excess(u, limits).bytes() > 0 ? freeConfirmed(u, unconfirmedRows, 0) : Future.succeededFuture(u))
        .compose(u -> {
          if (ShedPolicy.excess(u, limits).none()) return Future.succeededFuture(0);
          return shed.backlog().compose(backlog -> {
            Map<Integer, Long> plan = ShedPolicy.plan(u, limits, backlog);
            List<Future<Integer>> done = new ArrayList<>();
            long now = clock.millis();
            for (Map.Entry<Integer, Long> e : plan.entrySet()) {
              int priority = e.getKey();
              done.add(shed.shed(priority, e.getValue(), inFlight, now).onSuccess(n -> {
                if (n > 0) {
                  metrics.outboxShed(priority, n);
                  log.warn("outbox over its watermark (unconfirmed {} of {} rows, {} of {} bytes used, {} bytes free of {} to keep):"
                      + " shed the {} oldest results of priority {} (counted per device-minute, never critical ones)",
                      u.rows(), limits.maxRows(), u.bytes(), limits.maxBytes(), u.freeBytes(), limits.minFreeBytes(), n, priority);
                }
              }));
            }
            return Future.all(done).map(cf -> done.stream().mapToInt(Future::result).sum());
          });
        }).onComplete(ar -> {
          checking = false;
          if (ar.failed()) log.warn("cannot check the outbox's size: {}", ar.cause().getMessage());
        });
  }

  /**
   * Over a byte watermark: deletes confirmed rows, oldest first and a chunk at a time, until the watermarks are met or
   * none is left, before anything unconfirmed is shed. They are kept only for the retention's ledger; at 16,667 results/s
   * an hour of them is about 35 GB against the default 2 GiB, and until this the guard shed normal results whenever they
   * waited (measured: 9,414 shed in a 20 s publish stall with 9 MB unconfirmed and 90 MB of confirmed rows, max 30 MB).
   */
  private Future<ShedPolicy.Usage> freeConfirmed(ShedPolicy.Usage u, long unconfirmedRows, long deleted) {
    if (!ShedPolicy.overByteTarget(u, limits)) return retentionCut(u, deleted);
    return cleaner.deleteOldestConfirmed().compose(n -> measure(unconfirmedRows).compose(after ->
        n < cleaner.chunkRows() ? retentionCut(after, deleted + n) : freeConfirmed(after, unconfirmedRows, deleted + n)));
  }

  /** The outbox's usage now, also into the storage gauges. */
  private Future<ShedPolicy.Usage> measure(long unconfirmedRows) {
    return shed.usage(unconfirmedRows).onSuccess(u -> {
      usedBytes.set(u.bytes());
      freeBytes.set(u.freeBytes());
    });
  }

  private Future<ShedPolicy.Usage> retentionCut(ShedPolicy.Usage u, long deleted) {
    if (deleted == 0) return Future.succeededFuture(u);
    retentionCut.increment(deleted);
    cutSinceWarning += deleted;
    long now = clock.millis();
    if (!warnedCut || now - lastCutWarningMs >= CUT_WARNING_EVERY_MS) {
      log.warn("outbox over its byte watermark: deleted {} confirmed rows{} before outbox.retention.ms had passed (now {} of {} bytes used,"
          + " {} bytes free of {} to keep); they were kept only for the ledger, and results are shed only if the outbox is still over a watermark without them. Keeping the retention takes about"
          + " results/s x outbox.retention.ms x 600 bytes: raise outbox.max.bytes or lower outbox.retention.ms (probe_outbox_retention_cut_total counts them)",
          cutSinceWarning, warnedCut ? " since the last such warning" : "", u.bytes(), limits.maxBytes(), u.freeBytes(), limits.minFreeBytes());
      lastCutWarningMs = now;
      warnedCut = true;
      cutSinceWarning = 0;
    }
    return Future.succeededFuture(u);
  }

  /**
   * An append failed: nothing of it was written (the transaction rolled back); the results are dropped, and
   * said so — counted now, and entered in the shed ledger per device-minute and priority once the outbox
   * can be written again (the only way a critical result goes: the disk itself failed).
   */
  public void appendFailed(List<CheckResult> batch, Throwable cause) {
    int results = batch.size();
    metrics.outboxAppendFailed(results);
    for (CheckResult r : batch) {
      if (dropped.size() >= MAX_DROPPED_KEYS && !dropped.containsKey(key(r))) continue; // bounded: the counter above still has them
      dropped.merge(key(r), 1L, Long::sum);
    }
    String was = failure;
    failure = "the last outbox append failed at " + Instant.ofEpochMilli(clock.millis()) + ": " + cause.getMessage()
        + " (disk full or failing under data.dir?); rows written before are kept and still published";
    log.error("cannot write {} results to the outbox: {} — they are dropped (counted in probe_outbox_append_failures_total);"
        + " rows written before stay and are still published; the probe reports not-ready until an append succeeds{}",
        results, cause.getMessage(), was == null ? "" : " (still failing)");
  }

  public void appendSucceeded() {
    if (failure != null) {
      failure = null;
      log.info("outbox writable again; the probe is ready");
    }
    if (!dropped.isEmpty() && !recording) {
      Map<OutboxShed.Entry, Long> batch = new HashMap<>(dropped);
      dropped.clear();
      recording = true;
      List<OutboxShed.Entry> entries = new ArrayList<>();
      batch.forEach((k, n) -> entries.add(new OutboxShed.Entry(k.deviceId(), k.minuteEpochMs(), k.priority(), n)));
      shed.recordDropped(entries).onComplete(ar -> {
        recording = false;
        if (ar.succeeded()) {
          entries.forEach(e -> metrics.outboxShed(e.priority(), (int) e.count()));
          log.warn("recorded {} results a failed append dropped as shed ({} device-minutes)", entries.stream().mapToLong(OutboxShed.Entry::count).sum(), entries.size());
        } else {
          batch.forEach((k, n) -> dropped.merge(k, n, Long::sum)); // next time
        }
      });
    }
  }

  private static OutboxShed.Entry key(CheckResult r) {
    return new OutboxShed.Entry(r.deviceId(), r.collectedAt().toEpochMilli() / 60_000 * 60_000, r.devicePriority(), 0);
  }

  /** Readiness: the last append succeeded. */
  @Override
  public boolean getAsBoolean() {
    return failure == null;
  }

  @Override
  public String reason() {
    return failure;
  }
}
