package dev.inspection.bench;

import dev.inspection.config.Config;
import dev.inspection.state.SnapshotLayout;
import dev.inspection.store.Db;
import dev.inspection.store.Migrations;
import dev.inspection.store.PgOptions;
import dev.inspection.worker.DeviceDirectory;
import dev.inspection.worker.SnapshotLoader;
import dev.inspection.worker.WorkerVerticle;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A survivor's takeover of every slot, the load alone (no consumer competes): {@code devices} devices with a derived
 * snapshot each (a state after 30 results, 10 % DOWN) over {@code slots} slots in a scratch schema, then the whole set
 * loaded through {@link SnapshotLoader} on a pool of {@link WorkerVerticle#SNAPSHOT_CONNECTIONS} connections (the worker's snapshot pool;
 * three, the control pool's, before 2026-12-08), its callbacks on one
 * event loop (the worker's), in rounds alternating the ways of walking the slots:
 * <ul>
 *   <li>{@code walks=N}: N walks through contiguous parts of the slots at once, each slot handed over with its last page;
 *   <li>{@code groups=32}: groups of 32 slots all at once, each group's slots handed over with the group's last page
 *       (the worker before the walks).
 * </ul>
 * Each round starts with an empty device directory, as a worker that has just started. {@code layouts=compact,v1}
 * ({@code worker.snapshot.layout}) fills a schema of the same devices and states for each layout and alternates them in
 * every round, so the two loads are set side by side in one run.
 * Prints, per way, when the first slot, half of them and the last were handed over, a slot's own load ({@code
 * Snapshot.millis}: in a group, the group's), and this JVM's CPU over the load.
 * {@code ./run.sh bench --takeover} runs it (flags through {@code BENCH_TAKEOVER_ARGS}).
 */
public final class TakeoverBench {
  private TakeoverBench() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> opt = BenchArgs.parse("takeover-bench", args, Map.of("devices", "1000000", "slots", "256", "page", "1000", "rounds", "3",
        "ways", "walks=1,walks=2,groups=32", "layouts", "compact"));
    int devices = Integer.parseInt(opt.get("devices"));
    int slots = Integer.parseInt(opt.get("slots"));
    int page = Integer.parseInt(opt.get("page"));
    int rounds = Integer.parseInt(opt.get("rounds"));
    List<String> ways = List.of(opt.get("ways").split(","));
    List<String> layouts = List.of(opt.get("layouts").split(","));
    Vertx vertx = Vertx.vertx();
    // each layout (worker.snapshot.layout) its own schema of the same devices and states; the rounds alternate them
    Map<String, Pool> pools = new LinkedHashMap<>();
    Map<String, String> schemas = new HashMap<>();
    try {
      for (String layout : layouts) {
        String schema = "bench_takeover_" + System.currentTimeMillis() / 1000 + "_" + layout;
        Config config = Config.of(Map.of("pg.schema", schema, "slots.total", Integer.toString(slots), "role", "worker"));
        Pool pool = Db.pool(vertx, PgOptions.from(config), WorkerVerticle.SNAPSHOT_CONNECTIONS);
        pools.put(layout, pool);
        schemas.put(layout, schema);
        await(Migrations.apply(vertx, pool, PgOptions.from(config), slots, true));
        fill(pool, devices, slots, page, schema, SnapshotLayout.parse(layout));
      }
      Context ctx = vertx.getOrCreateContext();
      List<Integer> all = new ArrayList<>();
      for (int s = 0; s < slots; s++) all.add(s);
      Map<String, List<double[]>> results = new LinkedHashMap<>();
      for (int r = 0; r < rounds; r++) {
        for (String layout : layouts) {
          Pool pool = pools.get(layout);
          for (String way : ways) {
            String name = layouts.size() > 1 ? layout + " " + way : way;
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
            double[] row = {handed[0], handed[handed.length / 2], handed[handed.length - 1], cpu, own[own.length / 2],
                own[(int) Math.ceil(own.length * 0.99) - 1], own[own.length - 1]};
            results.computeIfAbsent(name, k -> new ArrayList<>()).add(row);
            System.out.printf("  round %d %-18s first slot %6.2f s, half %6.2f s, last %6.2f s; a slot's own load p50 %.0f ms, p99 %.0f ms, max %.0f ms; this JVM %.1f s of CPU; slowest %s%n",
                r + 1, name, row[0], row[1], row[2], row[4], row[5], row[6], cpu, slowest);
          }
        }
      }
      System.out.println("median of the rounds (seconds after the load's start):");
      results.forEach((name, rs) -> System.out.printf(
          "  %-18s first slot %6.2f, half %6.2f, last %6.2f; a slot's own load p50 %.0f ms, p99 %.0f ms, max %.0f ms; JVM CPU %.1f s; %.0f devices/s%n", name,
          med(rs, 0), med(rs, 1), med(rs, 2), med(rs, 4), med(rs, 5), med(rs, 6), med(rs, 3), devices / med(rs, 2)));
    } finally {
      for (String layout : pools.keySet()) ScratchSchema.close("takeover-bench", schemas.get(layout), pools.get(layout), null);
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /** {@code devices} devices over {@code slots} slots, each with a snapshot in {@code layout} of a state after 30 results (10 % DOWN). */
  private static void fill(Pool pool, int devices, int slots, int page, String schema, SnapshotLayout layout) throws Exception {
    long t0 = System.nanoTime();
    // a device's state after 30 results (10 % DOWN), as DerivedMemory plans it: 16 variants
    String[] snapshots = DerivedMemory.planned(16).values().stream().map(layout::encode).toArray(String[]::new);
    for (int from = 0; from < devices; from += 100_000) {
      await(pool.preparedQuery("""
          INSERT INTO device_status_current (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id, status_payload,
            derived_snapshot)
          SELECT 'sim-' || lpad(g::text, 7, '0'), g % $3, g % $3, 30, 1, now(), 1, 'm-' || g, '{"status":"UP","latency_ms":12}',
            ($4::text[])[g % 16 + 1]::json
          FROM generate_series($1::int, $2::int) g""").execute(Tuple.of(from, Math.min(devices, from + 100_000) - 1, slots, snapshots)));
    }
    await(pool.query("ANALYZE device_status_current").execute());
    long bytes = await(pool.query("SELECT pg_total_relation_size('device_status_current')").execute()).iterator().next().getLong(0);
    System.out.printf("takeover bench: schema %s, %d devices over %d slots (%d a slot), %s snapshots of %d bytes, written in %.1f s, table %.0f MB"
        + " (with its indexes and TOAST); pages of %d%n", schema, devices, slots, devices / slots, layout.name().toLowerCase(Locale.ROOT),
        snapshots[0].length(), (System.nanoTime() - t0) / 1e9, bytes / 1e6, page);
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
