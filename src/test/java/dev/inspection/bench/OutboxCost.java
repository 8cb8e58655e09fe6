package dev.inspection.bench;

import dev.inspection.messaging.Priority;
import dev.inspection.messaging.Topology;
import dev.inspection.outbox.CheckResult;
import dev.inspection.outbox.Outbox;
import dev.inspection.outbox.OutboxCleaner;
import dev.inspection.outbox.OutboxRow;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What a row costs the probe's outbox thread, by step: the append (envelope encoding and the SQLite insert,
 * one FULL commit per append), the confirm marks and the clean. Appends of {@code rows} results, each
 * confirmed in chunks as the publisher does, {@code rounds} times; prints the outbox thread's CPU per row of
 * each step (the thread's CPU time, so what else runs on the machine changes it little) and the file's size. Then a
 * clean of {@code fill} confirmed rows (a minute of a million devices by default) with appends going on, in one
 * transaction and in the cleaner's chunks.
 *
 * <pre>java -cp "target/classes:target/test-classes:$(cat target/bench-classpath.txt)" dev.inspection.bench.OutboxCost 500 400 50 1000000</pre>
 */
public final class OutboxCost {
  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 500;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 400;
    int confirmChunk = args.length > 2 ? Integer.parseInt(args[2]) : 50;
    Path dir = Files.createTempDirectory("outbox-cost");
    Path file = dir.resolve("outbox.db");
    Vertx vertx = Vertx.vertx();
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    try {
      Topology topology = new Topology("bench", 256, 100_000_000L, 20);
      Outbox outbox = await(Outbox.open(vertx, file, "bench-p", topology, Clock.systemUTC()));
      long tid = java.util.Arrays.stream(mx.getThreadInfo(mx.getAllThreadIds())).filter(t -> t != null && t.getThreadName().equals("outbox-outbox.db"))
          .findFirst().orElseThrow().getThreadId();
      long appendNs = 0;
      long confirmNs = 0;
      long appendWall = 0;
      long n = 0;
      for (int round = 0; round < rounds; round++) {
        List<CheckResult> batch = new ArrayList<>(rows);
        Instant at = Instant.now();
        for (int i = 0; i < rows; i++) {
          String device = "dev-" + ((round * rows + i) % 150_000);
          JsonObject payload = new JsonObject().put("check", "sim").put("status", "UP").put("latency_ms", 1 + i % 50);
          batch.add(new CheckResult(device, i % 256, Priority.NORMAL, at, 1, 1, 1, payload));
        }
        long c0 = cpu(outbox, mx, tid);
        long w0 = System.nanoTime();
        List<OutboxRow> done = await(outbox.append(batch));
        appendWall += System.nanoTime() - w0;
        long c1 = cpu(outbox, mx, tid);
        for (int i = 0; i < done.size(); i += confirmChunk) {
          List<Long> ids = new ArrayList<>();
          for (OutboxRow r : done.subList(i, Math.min(done.size(), i + confirmChunk))) ids.add(r.id());
          await(outbox.markConfirmed(ids));
        }
        long c2 = cpu(outbox, mx, tid);
        if (round >= rounds / 10) { // the first tenth warms up the JIT
          appendNs += c1 - c0;
          confirmNs += c2 - c1;
          n += rows;
        }
      }
      long c3 = cpu(outbox, mx, tid);
      int cleaned = await(new OutboxCleaner(outbox, Clock.systemUTC()).clean(-60_000));
      long c4 = cpu(outbox, mx, tid);
      long bytes = Files.size(file) + (Files.exists(dir.resolve("outbox.db-wal")) ? Files.size(dir.resolve("outbox.db-wal")) : 0);
      System.out.printf("outbox thread CPU per row (%d rows per append, confirms in chunks of %d, %d rows measured):%n", rows, confirmChunk, n);
      System.out.printf("  append %.1f µs (wall %.1f µs per row, FULL commit included), confirm %.1f µs, clean %.1f µs (%d rows); file + WAL %.1f MB before the clean%n",
          appendNs / 1e3 / n, appendWall / 1e3 / (rounds * (double) rows), confirmNs / 1e3 / n, (c4 - c3) / 1e3 / Math.max(1, cleaned), cleaned, bytes / 1e6);
      await(outbox.closeAsync());
      int fill = args.length > 3 ? Integer.parseInt(args[3]) : 1_000_000;
      for (int chunk : new int[] {Integer.MAX_VALUE, OutboxCleaner.CHUNK_ROWS}) cleanUnderLoad(vertx, dir.resolve("load-" + chunk + ".db"), fill, rows, chunk);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      try (var s = Files.walk(dir)) {
        s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /**
   * A minute's confirmed rows of a million devices cleaned while the probe goes on appending: {@code fill} rows
   * appended and confirmed, then the clean ({@code chunk} rows per transaction) with appends of {@code rows} results
   * submitted back to back until it ends; prints the clean's wall time, how the appends fared meanwhile and the WAL
   * file's size after it (SQLite keeps a WAL file's size once grown).
   */
  private static void cleanUnderLoad(Vertx vertx, Path file, int fill, int rows, int chunk) throws Exception {
    Outbox outbox = await(Outbox.open(vertx, file, "bench-p", new Topology("bench", 256, 100_000_000L, 20), Clock.systemUTC()));
    for (int done = 0; done < fill; done += rows) {
      List<Long> ids = new ArrayList<>(rows);
      for (OutboxRow r : await(outbox.append(batch(done, rows)))) ids.add(r.id());
      await(outbox.markConfirmed(ids));
    }
    long t0 = System.nanoTime();
    Future<Integer> clean = new OutboxCleaner(outbox, Clock.systemUTC(), chunk).clean(-60_000);
    List<Long> latencies = new ArrayList<>();
    while (!clean.isComplete()) {
      long a0 = System.nanoTime();
      await(outbox.append(batch(0, rows)));
      latencies.add(System.nanoTime() - a0);
    }
    int cleaned = await(clean);
    long wall = System.nanoTime() - t0;
    latencies.sort(null);
    Path wal = file.resolveSibling(file.getFileName() + "-wal");
    System.out.printf("clean of %d confirmed rows, %s, appends of %d rows meanwhile: %.0f ms; %d appends completed during it, the slowest %.0f ms, median %.1f ms; WAL file %.1f MB after it%n",
        cleaned, chunk == Integer.MAX_VALUE ? "one transaction" : chunk + " rows per transaction", rows, wall / 1e6, latencies.size(),
        latencies.get(latencies.size() - 1) / 1e6, latencies.get(latencies.size() / 2) / 1e6, Files.exists(wal) ? Files.size(wal) / 1e6 : 0.0);
    await(outbox.closeAsync());
  }

  private static List<CheckResult> batch(int first, int rows) {
    List<CheckResult> batch = new ArrayList<>(rows);
    Instant at = Instant.now();
    for (int i = 0; i < rows; i++) {
      String device = "dev-" + ((first + i) % 1_000_000);
      batch.add(new CheckResult(device, i % 256, Priority.NORMAL, at, 1, 1, 1, new JsonObject().put("check", "sim").put("status", "UP").put("latency_ms", 1 + i % 50)));
    }
    return batch;
  }

  /** The outbox thread's CPU time once everything submitted before has run on it. */
  private static long cpu(Outbox outbox, ThreadMXBean mx, long tid) throws Exception {
    await(outbox.stats());
    return mx.getThreadCpuTime(tid);
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }
}
