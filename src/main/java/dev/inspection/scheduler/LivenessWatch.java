package dev.inspection.scheduler;

import dev.inspection.control.Liveness;
import dev.inspection.store.Db;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader waits on every live worker's liveness lock, so PostgreSQL tells it the moment a worker's process is
 * gone instead of the next round finding out (issue 14: kill -9 → first commit elsewhere within 3 s; detection took
 * 290–836 ms, a tick of 500 ms plus the round). One dedicated session per live worker asks for the worker's lock with
 * {@code pg_advisory_lock} — the call blocks in PostgreSQL, using no CPU, until the worker's own session ends — then
 * gives the lock back at once and kicks a round, which sees the lock free ({@link ControlStore#crashed}) and
 * declares the worker DEAD as before. Nothing is decided here: a missed or spurious wake-up only makes a round
 * happen sooner or not, and the rounds' own check stays the judge.
 *
 * <p>A waiting statement holds a snapshot, and a snapshot holds PostgreSQL's xmin horizon: as long as it waits, vacuum
 * and page pruning keep every row version that died after it began, in every table of the database. One wait for the
 * whole life of a worker let {@code device_status_current} grow to 285,000 dead row versions for its 4,000 live rows
 * in a six-minute failover drill (a third of its updates HOT, no vacuum able to remove anything). So a wait ends
 * after {@link #WAIT_ROUND_MS} ({@code lock_timeout}, caught in the round itself, see {@link #round}) and is asked
 * again at once: the horizon trails by at most that.
 *
 * <p>Costs one PostgreSQL session per live worker on the leader (count them in {@code max_connections}) and a statement
 * per worker every {@link #WAIT_ROUND_MS}. A worker whose lock was found free is not watched again for
 * {@link #REARM_MS}: until the round has declared it DEAD (the leader's grace after an election holds that back) a new
 * wait would be granted at once, again and again. Runs on the control loop's context.
 */
final class LivenessWatch {
  private static final Logger log = LoggerFactory.getLogger(LivenessWatch.class);

  /** The worker's lock keys (as {@code LivenessSession} takes the lock). */
  static final String KEYS = "SELECT hashtext($1), hashtext($2)";
  static final String GIVE_BACK = "SELECT pg_advisory_unlock($1, $2)";
  /** A worker found free (or whose watch failed) is watched again after this long at the earliest. */
  static final long REARM_MS = 5_000;
  /** The longest one wait lasts ({@code lock_timeout}) before it is asked again: how far the xmin horizon may trail. */
  static final long WAIT_ROUND_MS = 2_000;

  /**
   * One wait round on the lock with keys {@code k1, k2}, then whether this session holds it. The timeout of a round
   * is caught in PL/pgSQL: as a plain statement's error it would be an ERROR line in PostgreSQL's log every round
   * for every live worker. Only the two integers from {@link #KEYS} go into the text (a DO block takes no parameters).
   */
  static String round(int k1, int k2) {
    return "DO $$BEGIN PERFORM pg_advisory_lock(" + k1 + ", " + k2 + "); EXCEPTION WHEN lock_not_available THEN NULL; END$$;"
        + " SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted";
  }

  private final Vertx vertx;
  private final PgConnectOptions options;
  private final String namespace;
  private final Runnable onFree;
  private final LongSupplier clock;
  private final Map<String, PgConnection> waiting = new HashMap<>();
  /** Workers being connected for: their session is not open yet. */
  private final Set<String> opening = new HashSet<>();
  private final Map<String, Long> notBefore = new HashMap<>();
  private boolean warned;
  /** Bumped by {@link #release}: a session opened or a wait granted for an older generation is dropped. */
  private long generation;

  LivenessWatch(Vertx vertx, PgConnectOptions base, String schema, Runnable onFree, LongSupplier clockMs) {
    this.vertx = vertx;
    // each wait ends after WAIT_ROUND_MS and is asked again; a session whose client went away is noticed within a second
    this.options = Db.withSettings(base, Map.of("application_name", "inspection-leader-liveness-watch", "statement_timeout", "0",
        "lock_timeout", String.valueOf(WAIT_ROUND_MS), "idle_session_timeout", "0", "client_connection_check_interval", "1000"));
    this.namespace = Liveness.namespace(schema);
    this.onFree = onFree;
    this.clock = clockMs;
  }

  /** Watches exactly {@code live} (the workers a round read as live): new ones get a waiting session, gone ones lose theirs. */
  void follow(Collection<String> live) {
    Set<String> wanted = new HashSet<>(live);
    for (String w : Set.copyOf(waiting.keySet())) if (!wanted.contains(w)) drop(w);
    notBefore.keySet().retainAll(wanted);
    long now = clock.getAsLong();
    for (String w : wanted) {
      if (waiting.containsKey(w) || opening.contains(w) || now < notBefore.getOrDefault(w, Long.MIN_VALUE)) continue;
      open(w);
    }
  }

  private void open(String worker) {
    long gen = generation;
    opening.add(worker);
    PgConnection.connect(vertx, options).onComplete(ar -> {
      opening.remove(worker);
      if (ar.failed()) {
        notBefore.put(worker, clock.getAsLong() + REARM_MS);
        // once per term at WARN: a PostgreSQL that refuses these sessions (max_connections, a setting it does not know) costs detection time
        if (!warned) log.warn("liveness watch of {}: cannot open its session ({}); crashes are found by the rounds' check meanwhile (up to"
            + " scheduler.tick.ms later)", worker, ar.cause().getMessage());
        else log.debug("liveness watch of {}: cannot connect ({})", worker, ar.cause().getMessage());
        warned = true;
        return;
      }
      PgConnection c = ar.result();
      if (gen != generation) {
        c.close();
        return;
      }
      waiting.put(worker, c);
      c.preparedQuery(KEYS).execute(Tuple.of(namespace, worker)).onComplete(keys -> {
        if (keys.succeeded()) {
          Row k = keys.result().iterator().next();
          await(worker, c, k.getInteger(0), k.getInteger(1));
        } else {
          ended(worker, c, keys.cause());
        }
      });
    });
  }

  private void await(String worker, PgConnection c, int k1, int k2) {
    c.query(round(k1, k2)).execute().onComplete(done -> {
      if (waiting.get(worker) != c) return; // dropped meanwhile: its session is being closed
      if (done.failed()) {
        ended(worker, c, done.cause());
        return;
      }
      if (done.result().next().iterator().next().getLong(0) == 0) {
        await(worker, c, k1, k2); // the worker lives on: wait again, under a new snapshot
        return;
      }
      waiting.remove(worker);
      notBefore.put(worker, clock.getAsLong() + REARM_MS);
      // give the lock back before the round looks: its check takes the same lock, and so does the worker if it restarts
      c.preparedQuery(GIVE_BACK).execute(Tuple.of(k1, k2)).eventually(c::close).onComplete(v -> {
        log.info("liveness watch: the liveness lock of worker {} is free (its session ended: the process stopped or died); checking now", worker);
        onFree.run();
      });
    });
  }

  private void ended(String worker, PgConnection c, Throwable cause) {
    if (waiting.get(worker) != c) return;
    waiting.remove(worker);
    notBefore.put(worker, clock.getAsLong() + REARM_MS);
    c.close();
    log.debug("liveness watch of {} ended without the lock ({}); the rounds still check it", worker, cause.getMessage());
  }

  private void drop(String worker) {
    PgConnection c = waiting.remove(worker);
    if (c == null) return;
    // cancel the wait, then end the session (client_connection_check_interval ends it too, should the cancel be lost)
    c.cancelRequest().eventually(c::close);
  }

  /** Ends every wait (the node no longer leads, or stops). */
  void release() {
    generation++;
    for (String w : Set.copyOf(waiting.keySet())) drop(w);
    notBefore.clear();
    warned = false;
  }
}
