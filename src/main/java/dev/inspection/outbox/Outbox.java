package dev.inspection.outbox;

import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Topology;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

/**
 * The probe's durable outbox (seed 000 §3.5, INV-11): every result is committed here before it is
 * published, and stays until the broker confirms it.
 *
 * <p>SQLite in WAL mode with {@code synchronous=FULL} for appends: NORMAL survives kill -9 but may roll
 * back the last commits on power loss, and a probe that then reuses a {@code (device, seq)} with new
 * content would have its real data dropped downstream as a duplicate. FULL costs one fsync per commit,
 * so appends are group-committed (up to {@code outbox.commit.max.rows} per transaction), and confirm
 * marks are batched the same way. A result's {@code seq} is its row id: ids only grow (AUTOINCREMENT keeps
 * the highest ever used), so a device's seq grows too (INV-5), across restarts, with nothing per device to
 * store (until issue 11 a per-device counter table cost most of the pages an append wrote; README,
 * "Upgrading"). The cycle high-water mark is written in the same transaction as the rows.
 *
 * <p>All SQLite work runs on one dedicated worker thread, never on the event loop.
 */
public final class Outbox implements AutoCloseable {
  private static final String INSERT = "INSERT INTO outbox (id, message_id, device_id, cycle_id, seq, routing_key, body, created_at, priority) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
  private static final String UPSERT_CYCLE = "INSERT INTO probe_meta (k, v) VALUES ('cycle_hwm', ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v";
  private static final String UNCONFIRMED = "INSERT INTO outbox_unconfirmed (id, priority) VALUES (?, ?)";
  /** A confirm moves the id from one narrow table to the other ({@link OutboxSchema}); a row no longer unconfirmed (shed) is left alone. */
  private static final String CONFIRM = "DELETE FROM outbox_unconfirmed WHERE id = ?";
  private static final String CONFIRMED = "INSERT OR IGNORE INTO outbox_confirmed (id, confirmed_at) VALUES (?, ?)";
  /** CROSS JOIN: SQLite walks the narrow table's ids in order and looks each wide row up, never the other way round. */
  private static final String PENDING = """
      SELECT o.id, o.message_id, o.routing_key, o.body, o.created_at FROM outbox_unconfirmed u CROSS JOIN outbox o
      WHERE o.id = u.id AND u.id > ? AND u.id <= ? AND o.created_at <= ? ORDER BY u.id LIMIT ?""";
  private static final String COUNT_UNCONFIRMED = "SELECT count(*) FROM outbox_unconfirmed";
  /** The oldest unconfirmed row's append time: the narrow table's first id (rows are appended in id order). */
  private static final String OLDEST = "SELECT o.created_at FROM outbox_unconfirmed u CROSS JOIN outbox o WHERE o.id = u.id ORDER BY u.id LIMIT 1";
  private static final String LAST_ID = "SELECT max(v) FROM (SELECT seq AS v FROM sqlite_sequence WHERE name = 'outbox' UNION ALL SELECT max(id) FROM outbox)";

  /** Unconfirmed rows and the creation time of the oldest one (0 when empty). */
  public record Stats(long depth, long oldestCreatedAtMs) {}

  /** The file's one thread: every SQLite call runs here, in submission order whichever context asked. */
  private final ExecutorService thread;
  private final Vertx vertx;
  private volatile boolean closing;
  private final Connection db;
  private final String isNode;
  private final Topology topology;
  private final Clock clock;
  private long cycleHwm;
  /** The highest row id (and so seq) ever handed out (this thread is the file's only writer, so ids are given here, not read back per row). */
  private long lastId;
  /**
   * Unconfirmed rows, kept by every call that adds or settles one and counted from the file only at open and
   * after a failed append: a count every second took time in proportion to the backlog (31 ms at 90,000 rows).
   */
  private long unconfirmed;
  /** An append failed: read the counters back from the file before the next one. */
  private boolean resync;

  private Outbox(Vertx vertx, ExecutorService thread, Connection db, String isNode, Topology topology, Clock clock) {
    this.vertx = vertx;
    this.thread = thread;
    this.db = db;
    this.isNode = isNode;
    this.topology = topology;
    this.clock = clock;
  }

  /** Opens (creating if needed) the outbox file and loads the sequence counters. */
  public static Future<Outbox> open(Vertx vertx, Path file, String isNode, Topology topology, Clock clock) {
    ExecutorService ex = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "outbox-" + file.getFileName());
      t.setDaemon(true);
      return t;
    });
    return onThread(vertx, ex, () -> {
      Path parent = file.toAbsolutePath().getParent();
      try {
        Files.createDirectories(parent);
      } catch (IOException e) {
        throw new IOException("cannot create the outbox directory " + parent + ": " + e.getMessage()
            + " (set data.dir to a writable directory)", e);
      }
      Connection c = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
      try (Statement st = c.createStatement()) {
        st.execute("PRAGMA journal_mode=WAL");
        st.execute("PRAGMA synchronous=FULL");
        st.execute("PRAGMA busy_timeout=5000");
        OutboxSchema.create(st);
      }
      c.setAutoCommit(false);
      Outbox o = new Outbox(vertx, ex, c, isNode, topology, clock);
      o.load();
      return o;
    }).onFailure(e -> ex.shutdown());
  }

  /**
   * After a failed append: a fresh transaction, and both counters at least what the file holds (rows that
   * became durable despite the failure included). Failures only.
   */
  private void resync() throws SQLException {
    try (Statement st = db.createStatement()) {
      try (ResultSet rs = st.executeQuery("SELECT max(cycle_id) FROM outbox")) {
        if (rs.next()) cycleHwm = Math.max(cycleHwm, rs.getLong(1));
      }
      try (ResultSet rs = st.executeQuery(LAST_ID)) {
        if (rs.next()) lastId = Math.max(lastId, rs.getLong(1));
      }
      unconfirmed = countUnconfirmed(st);
    }
    db.commit();
    resync = false;
  }

  private void load() throws SQLException {
    try (Statement st = db.createStatement()) {
      try (ResultSet rs = st.executeQuery("SELECT v FROM probe_meta WHERE k = 'cycle_hwm'")) {
        if (rs.next()) cycleHwm = rs.getLong(1);
      }
      // AUTOINCREMENT keeps the highest id ever used in sqlite_sequence, also after its row was deleted
      try (ResultSet rs = st.executeQuery(LAST_ID)) {
        if (rs.next()) lastId = rs.getLong(1);
      }
      unconfirmed = countUnconfirmed(st);
    }
    db.commit();
  }

  private static long countUnconfirmed(Statement st) throws SQLException {
    try (ResultSet rs = st.executeQuery(COUNT_UNCONFIRMED)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Rows another store of this file removed while unconfirmed ({@link OutboxShed}); on this thread, after its commit. */
  void removedUnconfirmed(long n) {
    unconfirmed -= n;
  }

  /**
   * Gives each result its {@code (cycle_id, seq)}, writes them in one transaction and returns the rows
   * once they are durable. cycle_id is the check time in epoch milliseconds, never below the high-water
   * mark of earlier commits (so a clock step back cannot reorder a device's results); seq is the row id.
   */
  public Future<List<OutboxRow>> append(List<CheckResult> results) {
    return run(() -> {
      if (resync) resync();
      long hwmBefore = cycleHwm;
      long idBefore = lastId;
      List<OutboxRow> rows = new ArrayList<>(results.size());
      long now = clock.millis();
      try (Envelope.Writer writer = new Envelope.Writer();
           PreparedStatement ins = db.prepareStatement(INSERT);
           PreparedStatement state = db.prepareStatement(UNCONFIRMED);
           PreparedStatement cyc = db.prepareStatement(UPSERT_CYCLE)) {
        for (CheckResult r : results) {
          long rowId = ++lastId;
          long s = rowId;
          long cycle = Math.max(r.collectedAt().toEpochMilli(), cycleHwm);
          cycleHwm = cycle;
          String id = Envelope.messageId(isNode, cycle, r.deviceId(), s);
          Envelope e = new Envelope(id, r.deviceId(), r.slot(), r.slotMapVersion(), r.resourceVersion(), r.planVersion(),
              isNode, cycle, s, r.collectedAt(), r.priority(), r.payload());
          byte[] body = writer.write(e);
          String rk = topology.routingKey(r.slot(), r.priority());
          ins.setLong(1, rowId);
          ins.setString(2, id);
          ins.setString(3, r.deviceId());
          ins.setLong(4, cycle);
          ins.setLong(5, s);
          ins.setString(6, rk);
          ins.setBytes(7, body);
          ins.setLong(8, now);
          ins.setInt(9, r.devicePriority());
          ins.addBatch();
          state.setLong(1, rowId);
          state.setInt(2, r.devicePriority());
          state.addBatch();
          rows.add(new OutboxRow(rowId, id, rk, body, now));
        }
        ins.executeBatch();
        state.executeBatch();
        cyc.setLong(1, cycleHwm);
        cyc.executeUpdate();
        db.commit();
        unconfirmed += rows.size();
        return rows;
      } catch (SQLException e) {
        rollbackQuietly();
        // hand out no number that was not committed
        cycleHwm = hwmBefore;
        lastId = idBefore;
        // a full disk or an I/O error may have made SQLite roll the transaction back on its own, after which
        // the driver's later statements ran without one: some rows may be durable after all. Read the
        // counters back from the file before the next append, so no id (and so no seq) is used twice.
        resync = true;
        throw e;
      }
    });
  }

  /**
   * Marks rows confirmed by the broker. These commits skip the fsync ({@link #runWithoutFsync}): a mark lost on
   * power loss publishes the row once more, which every consumer ignores (D4); the next append's FULL commit makes
   * the mark durable anyway. Appends stay FULL.
   */
  public Future<Integer> markConfirmed(List<Long> ids) {
    return runWithoutFsync(() -> {
      long now = clock.millis();
      int n = 0;
      try (PreparedStatement ps = db.prepareStatement(CONFIRM); PreparedStatement log = db.prepareStatement(CONFIRMED)) {
        for (Long id : ids) {
          ps.setLong(1, id);
          ps.addBatch();
        }
        int[] moved = ps.executeBatch();
        for (int i = 0; i < moved.length; i++) {
          if (moved[i] <= 0) continue;
          n += moved[i];
          log.setLong(1, ids.get(i));
          log.setLong(2, now);
          log.addBatch();
        }
        if (n > 0) log.executeBatch();
        db.commit();
        unconfirmed -= n;
      }
      return n;
    });
  }

  /**
   * Runs {@code task} (which commits) on the outbox thread with {@code synchronous=NORMAL} for its transaction only,
   * then back to FULL: for writes whose loss on power loss is repaired by doing them again.
   */
  <T> Future<T> runWithoutFsync(Callable<T> task) {
    return run(() -> {
      synchronous("NORMAL");
      try {
        return task.call();
      } catch (SQLException e) {
        rollbackQuietly();
        throw e;
      } finally {
        synchronous("FULL");
      }
    });
  }

  /** Sets the durability of the next commits; outside a transaction, as SQLite requires. */
  private void synchronous(String mode) throws SQLException {
    db.setAutoCommit(true);
    try (Statement st = db.createStatement()) {
      st.execute("PRAGMA synchronous=" + mode);
    } finally {
      db.setAutoCommit(false);
    }
  }

  /** The durability in force ({@code PRAGMA synchronous}: 2 = FULL), for the test that holds appends to FULL. */
  Future<Integer> synchronousLevel() {
    return run(() -> {
      try (Statement st = db.createStatement(); ResultSet rs = st.executeQuery("PRAGMA synchronous")) {
        rs.next();
        int level = rs.getInt(1);
        db.commit();
        return level;
      }
    });
  }

  /** Unconfirmed rows with {@code afterId < id <= upToId}, created at or before {@code createdBeforeMs}, in id order. */
  public Future<List<OutboxRow>> pending(long afterId, long upToId, long createdBeforeMs, int limit) {
    return run(() -> OutboxRow.read(db, PENDING, afterId, upToId, createdBeforeMs, limit));
  }

  /** Unconfirmed rows (kept in memory, not counted) and the oldest one's append time (one index lookup). */
  public Future<Stats> stats() {
    return run(() -> {
      long oldest = 0;
      if (unconfirmed > 0) {
        try (Statement st = db.createStatement(); ResultSet rs = st.executeQuery(OLDEST)) {
          if (rs.next()) oldest = rs.getLong(1);
        }
      }
      db.commit();
      return new Stats(unconfirmed, oldest);
    });
  }

  /** Unconfirmed rows as the file counts them, for the test that checks the kept count against it. */
  Future<Long> countUnconfirmed() {
    return run(() -> {
      try (Statement st = db.createStatement()) {
        long n = countUnconfirmed(st);
        db.commit();
        return n;
      }
    });
  }

  /**
   * Back to a clean transaction after an error. On a full disk or an I/O error SQLite may already have rolled
   * the transaction back on its own; the driver then has no transaction open (its rollback fails and begins
   * none) and every later statement would commit by itself: begin one as the driver expects.
   */
  private void rollbackQuietly() {
    try {
      db.rollback();
    } catch (SQLException noTransaction) {
      try (Statement st = db.createStatement()) {
        st.execute("BEGIN");
      } catch (SQLException ignored) {
        // the connection is broken; the next call reports it
      }
    }
  }

  /** The file's connection, for the outbox's other stores ({@link OutboxShed}); use it only inside {@link #run}. */
  Connection connection() {
    return db;
  }

  /** Runs a task on the outbox's thread, or fails at once once the outbox is closing (a late timer must not reach a closed file). */
  <T> Future<T> run(Callable<T> task) {
    if (closing) return Future.failedFuture(new IllegalStateException("the outbox is closed"));
    return onThread(vertx, thread, () -> {
      try {
        return task.call();
      } catch (SQLException e) {
        rollbackQuietly(); // every call leaves the connection in a transaction, whatever failed
        throw e;
      }
    });
  }

  /** The task on {@code thread}, its outcome back on the caller's context; a stopped thread fails it as closed. */
  private static <T> Future<T> onThread(Vertx vertx, ExecutorService thread, Callable<T> task) {
    Context ctx = vertx.getOrCreateContext();
    Promise<T> p = Promise.promise();
    try {
      thread.execute(() -> {
        try {
          T result = task.call();
          ctx.runOnContext(v -> p.complete(result));
        } catch (Throwable e) {
          ctx.runOnContext(v -> p.fail(e));
        }
      });
    } catch (RejectedExecutionException e) {
      return Future.failedFuture(new IllegalStateException("the outbox is closed"));
    }
    return p.future();
  }

  /**
   * Closes after every task already submitted (from any context: the thread runs them in order); the thread
   * then ends, and any later call fails with "the outbox is closed".
   */
  public Future<Void> closeAsync() {
    if (closing) return Future.succeededFuture();
    closing = true;
    Future<Void> closed = onThread(vertx, thread, () -> {
      close();
      return null;
    });
    thread.shutdown();
    return closed;
  }

  @Override
  public void close() throws SQLException {
    if (!db.isClosed()) db.close();
  }
}
