package dev.inspection.worker;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's side of slot ownership: registers the worker, heartbeats, renews its leases (a plain
 * UPDATE, which takes no lock that a batch's {@code FOR KEY SHARE} holds, so renewals never wait on
 * batches), and — until a scheduler assigns slots — claims free or expired slots itself, up to a fair
 * share. Every claim bumps the epoch under {@code FOR UPDATE}, which waits for a batch of the previous
 * owner still in flight and fences every later one (D1).
 *
 * <p>The database is the truth (INV-14): the renewal's answer is the set of slots this worker holds.
 */
public final class LeaseKeeper {
  private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

  static final String REGISTER = """
      INSERT INTO worker_heartbeat (worker_id, state, last_heartbeat, started_at, metadata)
      VALUES ($1, 'ACTIVE', now(), now(), $2::jsonb)
      ON CONFLICT (worker_id) DO UPDATE SET state = 'ACTIVE', last_heartbeat = now(), started_at = now(), metadata = EXCLUDED.metadata""";
  static final String HEARTBEAT = "UPDATE worker_heartbeat SET last_heartbeat = now(), backlog_metrics = $2::jsonb WHERE worker_id = $1 RETURNING state";
  static final String RENEW = """
      UPDATE slot_lease SET lease_until = now() + $2::bigint * interval '1 millisecond', last_renewed_at = now()
      WHERE owner_worker_id = $1 AND state = 'ACTIVE' RETURNING slot_id, lease_epoch""";
  static final String LIVE_WORKERS = """
      SELECT count(*) FROM worker_heartbeat WHERE state = 'ACTIVE' AND last_heartbeat > now() - $1::bigint * interval '1 millisecond'""";
  static final String CLAIM = """
      WITH cand AS (
        SELECT slot_id, owner_worker_id, lease_epoch FROM slot_lease
        WHERE owner_worker_id IS NULL OR lease_until IS NULL OR lease_until < now()
        ORDER BY slot_id LIMIT $2 FOR UPDATE),
      upd AS (
        UPDATE slot_lease s SET owner_worker_id = $1, lease_epoch = s.lease_epoch + 1, state = 'ACTIVE',
          lease_until = now() + $3::bigint * interval '1 millisecond', last_renewed_at = now(), updated_at = now()
        FROM cand WHERE s.slot_id = cand.slot_id
        RETURNING s.slot_id, s.lease_epoch, cand.owner_worker_id AS old_owner, cand.lease_epoch AS old_epoch),
      hist AS (
        INSERT INTO slot_lease_history (slot_id, old_owner, new_owner, old_epoch, new_epoch, reason)
        SELECT slot_id, old_owner, $1, old_epoch, lease_epoch, 'claim' FROM upd)
      SELECT slot_id, lease_epoch FROM upd""";
  static final String RELEASE = """
      WITH rel AS (
        UPDATE slot_lease SET owner_worker_id = NULL, state = 'FREE', lease_until = NULL, updated_at = now()
        WHERE owner_worker_id = $1 RETURNING slot_id, lease_epoch),
      hist AS (
        INSERT INTO slot_lease_history (slot_id, old_owner, new_owner, old_epoch, new_epoch, reason)
        SELECT slot_id, $1, NULL, lease_epoch, lease_epoch, 'release' FROM rel)
      SELECT count(*) FROM rel""";
  static final String OFFLINE = "UPDATE worker_heartbeat SET state = 'OFFLINE', last_heartbeat = now() WHERE worker_id = $1";

  private Runnable announce = () -> { };

  /** Called after this worker claimed or released slots (to tell other workers through Redis). */
  public void onChange(Runnable r) {
    this.announce = r;
  }

  /** What changes in this worker's holdings. */
  public interface Listener {
    void gained(int slot, long epoch);

    void lost(int slot, long epoch);
  }

  /** Tunables. */
  public record Settings(int totalSlots, long leaseTtlMs, long heartbeatMs, long claimIntervalMs, int maxSlots) {}

  private final Vertx vertx;
  private final Pool pool;
  private final String workerId;
  private final Settings settings;
  private final Listener listener;
  private final Map<Integer, Long> held = new HashMap<>();
  private long lastRenewOk;
  private boolean claiming = true;
  private boolean busy;
  private boolean claimAgain;
  private long heartbeatTimer = -1;
  private long claimTimer = -1;
  private final java.util.function.Supplier<JsonObject> backlog;

  public LeaseKeeper(Vertx vertx, Pool pool, String workerId, Settings settings, Listener listener,
      java.util.function.Supplier<JsonObject> backlog) {
    this.vertx = vertx;
    this.pool = pool;
    this.workerId = workerId;
    this.settings = settings;
    this.listener = listener;
    this.backlog = backlog;
  }

  public Map<Integer, Long> held() {
    return Map.copyOf(held);
  }

  public Future<Void> start() {
    lastRenewOk = System.currentTimeMillis();
    return register().onComplete(ar -> {
      if (ar.failed()) log.warn("cannot register worker {} yet ({}); retrying with the heartbeat", workerId, ar.cause().getMessage());
      heartbeatTimer = vertx.setPeriodic(settings.heartbeatMs(), t -> heartbeat());
      claimTimer = vertx.setPeriodic(settings.claimIntervalMs(), t -> claim());
      claim();
    }).recover(e -> Future.succeededFuture());
  }

  private Future<Void> register() {
    JsonObject meta = new JsonObject().put("pid", ProcessHandle.current().pid()).put("started", System.currentTimeMillis());
    return pool.preparedQuery(REGISTER).execute(Tuple.of(workerId, meta.encode())).mapEmpty();
  }

  private void heartbeat() {
    pool.preparedQuery(HEARTBEAT).execute(Tuple.of(workerId, backlog.get().encode()))
        .compose(rows -> {
          if (rows.size() == 0) return register();
          String state = rows.iterator().next().getString(0);
          if (!state.equals("ACTIVE") && !state.equals("DRAINING")) {
            log.warn("worker {} reads its own state {}: stopping all consumption", workerId, state);
            dropAll("state " + state);
            return Future.succeededFuture();
          }
          return renew();
        })
        .onFailure(e -> {
          log.warn("heartbeat failed ({})", e.getMessage());
          if (System.currentTimeMillis() - lastRenewOk > settings.leaseTtlMs() && !held.isEmpty()) {
            // our leases may have expired and moved: stop rather than consume on stale knowledge (INV-15)
            log.warn("no lease renewal for over {} ms: releasing every slot locally", settings.leaseTtlMs());
            dropAll("renewal overdue");
          }
        });
  }

  /** Renews and reconciles: the rows returned are exactly what this worker holds. */
  public Future<Void> renew() {
    return pool.preparedQuery(RENEW).execute(Tuple.of(workerId, settings.leaseTtlMs())).map(rows -> {
      lastRenewOk = System.currentTimeMillis();
      Map<Integer, Long> now = new HashMap<>();
      for (Row r : rows) now.put((int) r.getShort(0), r.getLong(1));
      reconcile(now);
      return null;
    });
  }

  private void reconcile(Map<Integer, Long> now) {
    for (Map.Entry<Integer, Long> e : Map.copyOf(held).entrySet()) {
      Long epoch = now.get(e.getKey());
      if (epoch == null || !epoch.equals(e.getValue())) {
        held.remove(e.getKey());
        listener.lost(e.getKey(), e.getValue());
      }
    }
    for (Map.Entry<Integer, Long> e : now.entrySet()) {
      if (!held.containsKey(e.getKey())) {
        held.put(e.getKey(), e.getValue());
        listener.gained(e.getKey(), e.getValue());
      }
    }
  }

  /** A batch found the lease gone: forget the slot now, without waiting for the next renewal. */
  public void forget(int slot, long epoch) {
    if (held.get(slot) != null && held.get(slot) == epoch) {
      held.remove(slot);
      listener.lost(slot, epoch);
    }
  }

  private void dropAll(String why) {
    for (Map.Entry<Integer, Long> e : Map.copyOf(held).entrySet()) {
      held.remove(e.getKey());
      listener.lost(e.getKey(), e.getValue());
    }
  }

  /** Claims free or expired slots up to a fair share of the live workers. */
  public void claim() {
    if (!claiming) return;
    if (busy) {
      claimAgain = true; // a notification during a round must not be lost
      return;
    }
    busy = true;
    claimAgain = false;
    pool.preparedQuery(LIVE_WORKERS).execute(Tuple.of(settings.leaseTtlMs()))
        .compose(rows -> {
          long live = Math.max(1, rows.iterator().next().getLong(0));
          int share = (int) ((settings.totalSlots() + live - 1) / live);
          if (settings.maxSlots() > 0) share = Math.min(share, settings.maxSlots());
          int want = share - held.size();
          if (want <= 0) return Future.succeededFuture(0);
          return pool.withTransaction(conn -> conn.query("SET LOCAL lock_timeout = '2s'").execute()
              .compose(v -> conn.preparedQuery(CLAIM).execute(Tuple.of(workerId, want, settings.leaseTtlMs()))))
              .map(claimed -> {
                for (Row r : claimed) {
                  int slot = r.getShort(0);
                  long epoch = r.getLong(1);
                  held.put(slot, epoch);
                  listener.gained(slot, epoch);
                }
                if (claimed.size() > 0) announce.run();
                return claimed.size();
              });
        })
        .onComplete(ar -> {
          busy = false;
          if (claimAgain) vertx.runOnContext(v -> claim());
          if (ar.failed()) log.debug("claim round failed: {}", ar.cause().getMessage());
          else if (ar.result() > 0) log.info("worker {} claimed {} slot(s); holds {}", workerId, ar.result(), held.size());
        });
  }

  /** Hands every lease back (D6: no waiting for expiry) and marks the worker OFFLINE. */
  public Future<Integer> releaseAll() {
    claiming = false;
    held.clear();
    vertx.cancelTimer(heartbeatTimer);
    vertx.cancelTimer(claimTimer);
    // OFFLINE before the announcement: the others size their fair share by the live workers
    return pool.preparedQuery(RELEASE).execute(Tuple.of(workerId))
        .map(rows -> rows.iterator().next().getLong(0).intValue())
        .compose(n -> pool.preparedQuery(OFFLINE).execute(Tuple.of(workerId)).map(n))
        .onSuccess(n -> { if (n > 0) announce.run(); });
  }

  public void stopClaiming() {
    claiming = false;
  }
}
