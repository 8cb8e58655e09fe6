package dev.inspection.worker;

import dev.inspection.common.Backoff;
import dev.inspection.common.RetryPolicy;
import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import dev.inspection.metrics.Metrics;
import dev.inspection.worker.BatchStore.Committed;
import dev.inspection.worker.BatchStore.Fenced;
import dev.inspection.worker.BatchStore.Outcome;
import dev.inspection.worker.BatchStore.Part;
import dev.inspection.worker.CommitGroup.SlotCommit;
import dev.inspection.worker.DbErrors.DbError;
import dev.inspection.worker.DbErrors.Kind;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Commits one group of slot parts ({@link CommitGroup}) and handles the failures that are not an outage
 * (DESIGN.md D9, classified by {@link DbErrors}):
 * <ul>
 *   <li>{@link Kind#RETRY} (serialization failure, deadlock, lock timeout): the same transaction again after a
 *       short jittered backoff, up to {@code worker.db.retries} times; then it fails like an outage. Not a
 *       {@link BatchStore.HistoryLocked}: that fails at once, and {@link CommitGroup} writes the group without history;</li>
 *   <li>{@link Kind#POISON} (PostgreSQL refuses some rows): the group is halved ({@link PoisonSplit}) — by slot,
 *       then the failing slot by device — and each half committed on its own, one after the other, until the
 *       devices PostgreSQL refuses stand alone. Everything else commits; each slot's result names its refused
 *       devices with their SQLSTATE, and the slot processor dead-letters their results ({@code db_rejected}).
 *       At most {@code worker.poison.max.split.commits} commits per group: past that the group fails like an
 *       outage (requeued, nothing dead-lettered) — so many refused rows is not a poison result but a systemic
 *       fault an operator must see;</li>
 *   <li>anything else (and an outage in the middle of a split) fails the whole group: the slots requeue and
 *       wait for PostgreSQL. Halves committed before it stay committed; their redelivery is idempotent (D4).</li>
 * </ul>
 * Every commit, split ones included, is a {@link BatchStore#commit}: each re-checks its slots' leases (D1), so
 * a slot that moved during a split is {@link Fenced} and the rest of its halves write nothing.
 */
final class PoisonSplitter {
  private static final Logger log = LoggerFactory.getLogger(PoisonSplitter.class);

  /** {@code retries}: attempts again after a RETRY error; {@code maxSplitCommits}: commits one split may use; {@code backoff}: between retries. */
  record Settings(int retries, int maxSplitCommits, RetryPolicy backoff) {
    static Settings from(Config c) {
      return new Settings(c.getInt(Keys.WORKER_DB_RETRIES), c.getInt(Keys.WORKER_POISON_MAX_SPLIT_COMMITS), RetryPolicy.from(c));
    }
  }

  /** The transaction itself ({@link BatchStore#commit}). */
  interface Store {
    Future<Map<Integer, Outcome>> commit(List<Part> parts);
  }

  private final Vertx vertx;
  private final Store store;
  private final Settings settings;
  private final Metrics metrics;

  PoisonSplitter(Vertx vertx, Store store, Settings settings, Metrics metrics) {
    this.vertx = vertx;
    this.store = store;
    this.settings = settings;
    this.metrics = metrics;
  }

  /** Each slot's result; fails when the group cannot be written now (an outage, retries or split commits used up). */
  Future<Map<Integer, SlotCommit>> commit(List<Part> parts) {
    return attempt(parts, settings.retries(), null).transform(ar -> {
      if (ar.succeeded()) {
        Map<Integer, SlotCommit> out = new HashMap<>();
        ar.result().forEach((slot, outcome) -> out.put(slot, new SlotCommit(outcome, Map.of())));
        return Future.succeededFuture(out);
      }
      DbError e = DbErrors.of(ar.cause());
      if (e.kind() != Kind.POISON) return Future.failedFuture(ar.cause());
      return new Split(parts, e).run();
    });
  }

  private Future<Map<Integer, Outcome>> attempt(List<Part> parts, int retriesLeft, Backoff backoff) {
    return store.commit(parts).recover(failure -> {
      DbError e = DbErrors.of(failure);
      // a locked history is not a race: the group is written again at once with its history spilled (CommitGroup)
      if (e.kind() != Kind.RETRY || retriesLeft <= 0 || BatchStore.historyLocked(failure)) return Future.failedFuture(failure);
      Backoff b = backoff == null ? settings.backoff().backoff() : backoff;
      long delay = b.next();
      metrics.dbRetried();
      log.info("batch transaction of {} slot(s) lost a race ({}); trying it again in {} ms", parts.size(), e.describe(), delay);
      Promise<Map<Integer, Outcome>> again = Promise.promise();
      vertx.setTimer(delay, t -> attempt(parts, retriesLeft - 1, b).onComplete(again));
      return again.future();
    });
  }

  /** The search for the refused rows of one group, depth first, one commit at a time. */
  private final class Split {
    private final List<Part> group;
    private final DbError first;
    private final Map<Integer, Outcome> outcomes = new HashMap<>();
    private final Map<Integer, Map<String, DbError>> refused = new LinkedHashMap<>();
    private int commits;

    Split(List<Part> group, DbError first) {
      this.group = group;
      this.first = first;
    }

    Future<Map<Integer, SlotCommit>> run() {
      log.warn("PostgreSQL refused a batch transaction of {} slot(s), {} result(s) ({}); splitting it to find the rows it refuses",
          group.size(), group.stream().mapToInt(Part::size).sum(), first.describe());
      return resolve(group, first).transform(ar -> {
        if (ar.failed()) {
          log.warn("split of a refused batch transaction stopped after {} commit(s): {}", commits, ar.cause().getMessage());
          return Future.failedFuture(ar.cause());
        }
        List<String> names = new ArrayList<>();
        refused.forEach((slot, devices) -> devices.forEach((d, e) -> names.add(d + " (slot " + slot + ", " + e.describe() + ")")));
        log.warn("split done in {} commit(s): PostgreSQL refuses the results of {} device(s), set aside as db_rejected: {}; the rest committed",
            commits, names.size(), names);
        Map<Integer, SlotCommit> out = new HashMap<>();
        for (Part p : group) {
          Outcome o = outcomes.getOrDefault(p.slot(), new Committed(0, 0)); // every device of the slot refused: nothing written, lease held
          out.put(p.slot(), new SlotCommit(o, o instanceof Fenced ? Map.of() : Map.copyOf(refused.getOrDefault(p.slot(), Map.of()))));
        }
        return Future.succeededFuture(out);
      });
    }

    /** {@code parts} failed as a whole with {@code error}: commit its halves, or it is one device, the culprit. */
    private Future<Void> resolve(List<Part> parts, DbError error) {
      List<List<Part>> halves = PoisonSplit.halves(parts);
      if (halves.isEmpty()) {
        Part p = parts.get(0);
        for (String d : PoisonSplit.devices(p.plan())) {
          refused.computeIfAbsent(p.slot(), s -> new LinkedHashMap<>()).put(d, error);
          metrics.dbRejected(error.sqlState());
        }
        return Future.succeededFuture();
      }
      return commitAlone(halves.get(0)).compose(v -> commitAlone(halves.get(1)));
    }

    private Future<Void> commitAlone(List<Part> parts) {
      if (commits >= settings.maxSplitCommits()) {
        return Future.failedFuture(new IllegalStateException("PostgreSQL refuses rows of too many devices: " + commits
            + " split commits (worker.poison.max.split.commits) did not isolate them (" + first.describe() + "); requeued like an outage"));
      }
      commits++;
      metrics.poisonSplitCommits(1);
      return attempt(parts, settings.retries(), null).transform(ar -> {
        if (ar.succeeded()) {
          ar.result().forEach(this::record);
          return Future.succeededFuture();
        }
        DbError e = DbErrors.of(ar.cause());
        return e.kind() == Kind.POISON ? resolve(parts, e) : Future.failedFuture(ar.cause());
      });
    }

    /** A fenced result wins (the slot moved: nothing more of it may be acked); committed counts add up. */
    private void record(int slot, Outcome o) {
      outcomes.merge(slot, o, (a, b) -> a instanceof Fenced ? a : b instanceof Fenced ? b
          : new Committed(((Committed) a).currentRows() + ((Committed) b).currentRows(), ((Committed) a).historyRows() + ((Committed) b).historyRows()));
    }
  }
}
