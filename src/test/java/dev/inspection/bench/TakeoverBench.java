package dev.inspection.bench;

import dev.inspection.config.Config;
import dev.inspection.store.Db;
import dev.inspection.store.Migrations;
import dev.inspection.store.PgOptions;
import dev.inspection.worker.DeviceDirectory;
import dev.inspection.worker.SnapshotLoader;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A survivor's takeover of every slot, the load alone (no consumer competes): {@code devices} devices with a derived
 * snapshot each (a state after 30 results, 10 % DOWN) over {@code slots} slots in a scratch schema, then the whole set
 * loaded through {@link SnapshotLoader} on a pool of three connections (the worker's control pool), its callbacks on one
 * event loop (the worker's), in rounds alternating the ways of walking the slots:
 * <ul>
 *   <li>{@code walks=N}: N walks through contiguous parts of the slots at once, each slot handed over with its last page;
 *   <li>{@code groups=32}: groups of 32 slots all at once, each group's slots handed over with the group's last page
 *       (the worker before the walks).
 * </ul>
 * Each round starts with an empty device directory, as a worker that has just started.
 * Prints, per way, when the first slot, half of them and the last were handed over, a slot's own load ({@code
 * Snapshot.millis}: in a group, the group's), and this JVM's CPU over the load.
 * {@code ./run.sh bench --takeover} runs it (flags through {@code BENCH_TAKEOVER_ARGS}).
 */
public final class TakeoverBench {
  private TakeoverBench() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> opt = BenchArgs.parse("takeover-bench", args, Map.of("devices", "1000000", "slots", "256", "page", "1000", "rounds", "3", "ways", "walks=1,walks=2,groups=32"));
    int devices = Integer.parseInt(opt.get("devices"));
    int slots = Integer.parseInt(opt.get("slots"));
    int page = Integer.parseInt(opt.get("page"));
    int rounds = Integer.parseInt(opt.get("rounds"));
    List<String> ways = List.of(opt.get("ways").split(","));
    String schema = "bench_takeover_" + System.currentTimeMillis() / 1000;
    Config config = Config.of(Map.of("pg.schema", schema, "slots.total", Integer.toString(slots), "role", "worker"));
    Vertx vertx = Vertx.vertx();
    Pool pool = Db.pool(vertx, PgOptions.from(config), 3);
    try {
      await(Migrations.apply(vertx, pool, PgOptions.from(config), slots, true));
      long t0 = System.nanoTime();
      // a device's state after 30 results (10 % DOWN), as DerivedMemory plans it: 16 variants
      String[] snapshots = DerivedMemory.planned(16).values().stream().map(st -> st.toJson().encode()).toArray(String[]::new);
      for (int from = 0; from < devices; from += 100_000) {
        await(pool.preparedQuery("""
            INSERT INTO device_status_current (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id, status_payload,
              derived_snapshot)
            SELECT 'sim-' || lpad(g::text, 7, '0'), g % $3, g % $3, 30, 1, now(), 1, 'm-' || g, '{"status":"UP","latency_ms":12}',
              ($4::text[])[g % 16 + 1]::json
            FROM generate_series($1::int, $2::int) g""").execute(Tuple.of(from, Math.min(devices, from + 100_000) - 1, slots, snapshots)));
      }
      await(pool.query("ANALYZE device_status_current").execute());
      System.out.printf("takeover bench: schema %s, %d devices over %d slots (%d a slot), snapshots of %d bytes, written in %.1f s; pages of %d%n",
          schema, devices, slots, devices / slots, snapshots[0].length(), (System.nanoTime() - t0) / 1e9, page);
      Context ctx = vertx.getOrCreateContext();
      List<Integer> all = new ArrayList<>();
      for (int s = 0; s < slots; s++) all.add(s);
      Map<String, List<double[]>> results = new HashMap<>();
      for (int r = 0; r < rounds; r++) {
        for (String way : ways) {
          // each round a worker that has just started: its device directory empty, as the worker's (1,000,000 entries at most)
          DeviceDirectory directory = new DeviceDirectory(pool, 600_000, 1_000_000);
          SnapshotLoader loader = new SnapshotLoader(pool, page, directory::listed);
          long cpu0 = jvmCpuNanos();
          long[] own = new long[all.size()];
          double[] handed = run(ctx, loader, all, way, own);
          double cpu = (jvmCpuNanos() - cpu0) / 1e9;
          Arrays.sort(handed);
          String slowest = slowest(own, 3);
          Arrays.sort(own);
          double[] row = {handed[0], handed[handed.length / 2], handed[handed.length - 1], cpu, own[own.length / 2], own[(int) Math.ceil(own.length * 0.99) - 1],
              own[own.length - 1]};
          results.computeIfAbsent(way, k -> new ArrayList<>()).add(row);
          System.out.printf("  round %d %-10s first slot %6.2f s, half %6.2f s, last %6.2f s; a slot's own load p50 %.0f ms, p99 %.0f ms, max %.0f ms; this JVM %.1f s of CPU; slowest %s%n",
              r + 1, way, row[0], row[1], row[2], row[4], row[5], row[6], cpu, slowest);
        }
      }
      System.out.println("median of the rounds (seconds after the load's start):");
      for (String way : ways) {
        List<double[]> rs = results.get(way);
        System.out.printf("  %-10s first slot %6.2f, half %6.2f, last %6.2f; a slot's own load p50 %.0f ms, p99 %.0f ms, max %.0f ms; JVM CPU %.1f s; %.0f devices/s%n", way,
            med(rs, 0), med(rs, 1), med(rs, 2), med(rs, 4), med(rs, 5), med(rs, 6), med(rs, 3), devices / med(rs, 2));
      }
    } finally {
      ScratchSchema.close("takeover-bench", schema, pool, vertx);
    }
  }

  /** The {@code k} longest own loads as "#i N ms" (i: the i-th slot handed over, from 1). */
  private static String slowest(long[] own, int k) {
    Integer[] idx = new Integer[own.length];
    for (int i = 0; i < idx.length; i++) idx[i] = i;
    Arrays.sort(idx, (a, b) -> Long.compare(own[b], own[a]));
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < Math.min(k, idx.length); i++) b.append(i == 0 ? "" : ", ").append('#').append(idx[i] + 1).append(' ').append(own[idx[i]]).append(" ms");
    return b.toString();
  }

  /** Seconds from the start to each slot's hand-over, for one way of walking; {@code own}: each slot's own load in ms. */
  private static double[] run(Context ctx, SnapshotLoader loader, List<Integer> all, String way, long[] own) throws Exception {
    int n = Integer.parseInt(way.substring(way.indexOf('=') + 1));
    double[] handed = new double[all.size()];
    Promise<Void> done = Promise.promise();
    long start = System.nanoTime();
    ctx.runOnContext(v -> {
      List<Future<Void>> parts = new ArrayList<>();
      int[] at = {0};
      if (way.startsWith("walks=")) {
        for (int w = 0; w < n; w++) {
          parts.add(loader.load(all.subList(w * all.size() / n, (w + 1) * all.size() / n), snaps -> {
            double t = (System.nanoTime() - start) / 1e9;
            snaps.forEach(s -> {
              own[at[0]] = s.millis();
              handed[at[0]++] = t;
            });
          }));
        }
      } else {
        for (int from = 0; from < all.size(); from += n) {
          List<Integer> group = all.subList(from, Math.min(all.size(), from + n));
          parts.add(loader.load(group).map(m -> {
            double t = (System.nanoTime() - start) / 1e9;
            m.values().forEach(s -> {
              own[at[0]] = s.millis();
              handed[at[0]++] = t;
            });
            return null;
          }));
        }
      }
      Future.all(parts).<Void>mapEmpty().onComplete(done);
    });
    await(done.future());
    return handed;
  }

  private static long jvmCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static double med(List<double[]> rows, int col) {
    double[] v = rows.stream().mapToDouble(r -> r[col]).sorted().toArray();
    return (v[(v.length - 1) / 2] + v[v.length / 2]) / 2;
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.MINUTES);
  }
}
