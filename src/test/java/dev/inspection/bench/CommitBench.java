package dev.inspection.bench;

import dev.inspection.config.Config;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.SlotHash;
import dev.inspection.state.AlertRules;
import dev.inspection.state.DerivedState;
import dev.inspection.state.PayloadProfiles;
import dev.inspection.store.Db;
import dev.inspection.store.Migrations;
import dev.inspection.store.PgOptions;
import dev.inspection.worker.BatchStore;
import dev.inspection.worker.DeviceDirectory;
import dev.inspection.worker.SnapshotLoader;
import dev.inspection.worker.StatePlanner;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Commit cost of the device-state write (issue 4) against the foundation's plain write, measured in
 * one run on the same database, interleaved so drift hits both alike:
 * <ul>
 *   <li><b>plain</b>: lease check, upsert of current (newest per device, replace), insert-or-ignore into
 *       history — what a batch cost before derived state existed;</li>
 *   <li><b>full</b>: the production {@link BatchStore}: the same plus merge by profile, derived state,
 *       alert events and alert_current, rollups of the genuinely new rows.</li>
 * </ul>
 * Then the snapshot load of one slot holding {@code --slot-devices} devices (INV-10).
 *
 * <pre>BENCH_COMMIT_ARGS="[--batches=300] [--batch=200] [--devices=20000] [--slot-devices=4000] [--generic-max=0] [--step-ms=1]" ./run.sh bench --commit</pre>
 * Uses a scratch schema {@code bench_commit_<time>} and drops it at the end.
 */
public final class CommitBench {
  static final String PLAIN_CURRENT = """
      INSERT INTO device_status_current AS c
        (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id, status_payload, updated_at)
      SELECT d, sl, sl, s, cy, ca, ep, m, convert_from(p, 'UTF8')::jsonb, now()
      FROM unnest($1::smallint[], $2::bigint[], $3::varchar[], $4::bigint[], $5::bigint[], $6::timestamptz[], $7::varchar[], $8::bytea[])
        AS t(sl, ep, d, s, cy, ca, m, p)
      ON CONFLICT (device_id) DO UPDATE SET
        seq = EXCLUDED.seq, cycle_id = EXCLUDED.cycle_id, collected_at = EXCLUDED.collected_at,
        writer_epoch = EXCLUDED.writer_epoch, message_id = EXCLUDED.message_id, slot_id = EXCLUDED.slot_id,
        status_payload = EXCLUDED.status_payload, updated_at = now()
      WHERE (c.cycle_id, c.seq) < (EXCLUDED.cycle_id, EXCLUDED.seq)""";
  static final String PLAIN_HISTORY = """
      INSERT INTO device_status_history (device_id, cycle_id, seq, retention_class, slot_id, collected_at, writer_epoch, message_id, status_payload)
      SELECT d, cy, s, 2, sl, ca, ep, m, convert_from(p, 'UTF8')::jsonb
      FROM unnest($1::smallint[], $2::bigint[], $3::varchar[], $4::bigint[], $5::bigint[], $6::timestamptz[], $7::varchar[], $8::bytea[])
        AS t(sl, ep, d, s, cy, ca, m, p)
      ON CONFLICT DO NOTHING""";

  private CommitBench() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> opt = BenchArgs.parse("commit-bench", args, Map.of("batches", "300", "batch", "200", "devices", "20000", "slot-devices", "4000", "generic-max", "0",
        "step-ms", "1"));
    // --step-ms: how far the results' clock moves per result; 3 with 20,000 devices puts a device's results about two minutes apart, as a
    // million devices every 60 s do (each result the first of its device's minute: a new rollup row), where 1 puts several in a minute
    long stepMs = Long.parseLong(opt.get("step-ms"));
    int batches = Integer.parseInt(opt.get("batches"));
    int batchSize = Integer.parseInt(opt.get("batch"));
    int devices = Integer.parseInt(opt.get("devices"));
    int slotDevices = Integer.parseInt(opt.get("slot-devices"));
    String schema = "bench_commit_" + System.currentTimeMillis() / 1000;
    int slots = 256;
    Config config = Config.of(Map.of("pg.schema", schema, "slots.total", Integer.toString(slots), "role", "worker"));
    Vertx vertx = Vertx.vertx();
    Pool pool = Db.pool(vertx, PgOptions.from(config), POOL);
    try {
      await(Migrations.apply(vertx, pool, PgOptions.from(config), slots, true));
      await(pool.query("UPDATE slot_lease SET owner_worker_id = 'bench', lease_epoch = 1, state = 'ACTIVE'").execute());
      DeviceDirectory directory = new DeviceDirectory(pool, 3_600_000, 1_000_000);
      await(directory.publishProfiles());
      // --generic-max: the full batches' worker.generic.plan.max.results (0, the bench's default: planned for their values)
      BatchStore store = new BatchStore(pool, "bench", Clock.systemUTC(), Integer.parseInt(opt.get("generic-max")));
      Random rnd = new Random(7);
      Map<String, Long> seq = new HashMap<>();
      Map<String, DerivedState> memory = new HashMap<>();
      long[] plain = new long[batches];
      long[] full = new long[batches];
      SessionCpu sessions = SessionCpu.of(pool, POOL);
      // CPU time over all batches of each mode: [0] the pool's PostgreSQL sessions, [1] this JVM (planning, encoding, the client)
      long[][] cpu = new long[2][2];
      long clock = System.currentTimeMillis() - 3_600_000;
      System.out.printf("commit bench: schema %s, %d batches of %d results per mode over %d devices (interleaved), generic plans up to %s results%n", schema,
          batches, batchSize, devices, opt.get("generic-max"));
      for (int b = 0; b < 2 * batches; b++) {
        boolean isFull = b % 2 == 1;
        List<Envelope> batch = new ArrayList<>(batchSize);
        for (int i = 0; i < batchSize; i++) {
          String d = (isFull ? "f-" : "p-") + rnd.nextInt(devices);
          long s = seq.merge(d, 1L, Long::sum);
          clock += stepMs;
          batch.add(new Envelope(Envelope.messageId("bench", clock, d, s), d, SlotHash.slotOf(d, slots), 1, 1, 1, "bench", clock, s,
              Instant.ofEpochMilli(clock), Priority.NORMAL, new JsonObject().put("status", rnd.nextDouble() < 0.1 ? "DOWN" : "UP")
                  .put("latency_ms", rnd.nextInt(500))));
        }
        long pg0 = sessions.nanos();
        long jvm0 = SessionCpu.jvmNanos();
        long start = System.nanoTime();
        if (isFull) {
          Map<String, DeviceDirectory.Info> infos = new HashMap<>();
          for (Envelope e : batch) infos.put(e.deviceId(), new DeviceDirectory.Info(2, PayloadProfiles.DEFAULT, false));
          Map<Integer, List<Envelope>> bySlot = new HashMap<>();
          for (Envelope e : batch) bySlot.computeIfAbsent(e.slotId(), k -> new ArrayList<>()).add(e);
          List<BatchStore.Part> parts = new ArrayList<>();
          List<StatePlanner.Plan> plans = new ArrayList<>();
          for (Map.Entry<Integer, List<Envelope>> e : bySlot.entrySet()) {
            StatePlanner.Plan plan = StatePlanner.plan(e.getValue(), memory, infos, AlertRules::forPriority);
            plans.add(plan);
            parts.add(new BatchStore.Part(e.getKey(), 1, plan));
          }
          await(store.commit(parts));
          for (StatePlanner.Plan p : plans) memory.putAll(p.next());
          full[b / 2] = System.nanoTime() - start;
        } else {
          await(pool.withTransaction(c -> c.preparedQuery("SELECT slot_id FROM slot_lease WHERE slot_id = ANY($1::int[]) FOR KEY SHARE")
              .execute(Tuple.of((Object) batch.stream().map(Envelope::slotId).distinct().toArray(Integer[]::new)))
              .compose(v -> c.preparedQuery(PLAIN_CURRENT).execute(arrays(newest(batch))))
              .compose(v -> c.preparedQuery(PLAIN_HISTORY).execute(arrays(batch)))));
          plain[b / 2] = System.nanoTime() - start;
        }
        int m = isFull ? 1 : 0;
        cpu[m][0] += sessions.nanos() - pg0;
        cpu[m][1] += SessionCpu.jvmNanos() - jvm0;
      }
      double p = median(plain);
      double f = median(full);
      System.out.printf("plain upsert + history:                 median %.2f ms per batch, mean %.2f ms%n", p / 1e6, mean(plain) / 1e6);
      System.out.printf("full (merge, derived, alerts, rollups): median %.2f ms per batch, mean %.2f ms%n", f / 1e6, mean(full) / 1e6);
      System.out.printf("ratio full / plain: %.2f (median), %.2f (mean)%n", f / p, mean(full) / mean(plain));
      double results = (double) batches * batchSize;
      if (sessions.readable()) {
        System.out.printf("CPU per result, PostgreSQL's %d sessions (/proc/<pid>/schedstat): plain %.1f µs, full %.1f µs, ratio %.2f%s%n", POOL,
            cpu[0][0] / results / 1e3, cpu[1][0] / results / 1e3, (double) cpu[1][0] / cpu[0][0], sessions.same() ? "" : " (a session was replaced: too low)");
      } else {
        System.out.println("CPU per result, PostgreSQL's sessions: NA (their /proc/<pid>/schedstat is not readable: another host or user)");
      }
      System.out.printf("CPU per result, this JVM: plain %.1f µs, full %.1f µs%n", cpu[0][1] / results / 1e3, cpu[1][1] / results / 1e3);
      long alerts = await(pool.query("SELECT count(*) FROM alert_event").execute()).iterator().next().getLong(0);
      System.out.printf("alert events written by the full batches: %d%n", alerts);

      // INV-10: a slot of slotDevices devices with derived state, loaded as a new owner would
      await(pool.preparedQuery("""
          INSERT INTO device_status_current (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id, status_payload,
            derived_snapshot)
          SELECT 'snap-' || g, 255, 255, 1, 1, now(), 1, 'x', '{"status":"UP"}', $1::json FROM generate_series(1, $2) g""")
          .execute(Tuple.of(memory.values().stream().findFirst().orElse(DerivedState.initial()).toJson(), slotDevices)));
      SnapshotLoader loader = new SnapshotLoader(pool, 1000);
      long[] loads = new long[5];
      int loaded = 0;
      for (int i = 0; i < loads.length; i++) {
        long start = System.nanoTime();
        SnapshotLoader.Snapshot s = await(loader.load(255));
        loads[i] = System.nanoTime() - start;
        loaded = s.devices();
      }
      System.out.printf("snapshot load of a %d-device slot (pages of 1000): median %.1f ms, max %.1f ms (5 loads)%n", loaded, median(loads) / 1e6,
          Arrays.stream(loads).max().orElse(0) / 1e6);
      DerivedMemory.print(100_000);
    } finally {
      ScratchSchema.close("commit-bench", schema, pool, vertx);
    }
  }

  private static final int POOL = 4;

  /**
   * The CPU time of the pool's PostgreSQL sessions, read from {@code /proc/<pid>/schedstat} (nanoseconds on the CPU; the bench
   * runs on the database's host): every connection is opened at once before the batches, and the same ones serve them all.
   */
  private record SessionCpu(List<Integer> pids, Pool pool) {
    static SessionCpu of(Pool pool, int size) throws Exception {
      List<Future<SqlConnection>> open = new ArrayList<>();
      for (int i = 0; i < size; i++) open.add(pool.getConnection());
      List<Integer> pids = new ArrayList<>();
      for (Future<SqlConnection> f : open) {
        SqlConnection c = await(f);
        pids.add(await(c.query("SELECT pg_backend_pid()").execute()).iterator().next().getInteger(0));
      }
      for (Future<SqlConnection> f : open) await(f.result().close());
      return new SessionCpu(pids, pool);
    }

    boolean readable() {
      return pids.stream().allMatch(p -> Files.isReadable(Path.of("/proc/" + p + "/schedstat")));
    }

    long nanos() {
      long sum = 0;
      for (int p : pids) {
        try {
          String s = Files.readString(Path.of("/proc/" + p + "/schedstat"));
          sum += Long.parseLong(s.substring(0, s.indexOf(' ')));
        } catch (IOException | RuntimeException e) {
          return 0;
        }
      }
      return sum;
    }

    /** Whether the pool still runs on the sessions it started with (an idle connection closed and opened again would not be counted). */
    boolean same() throws Exception {
      List<Integer> now = new ArrayList<>();
      for (Row r : await(pool.preparedQuery("SELECT pid FROM pg_stat_activity WHERE pid = ANY($1::int[])").execute(Tuple.of((Object) pids.toArray(Integer[]::new))))) {
        now.add(r.getInteger(0));
      }
      return now.size() == pids.size();
    }

    static long jvmNanos() {
      return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }
  }

  private static List<Envelope> newest(List<Envelope> batch) {
    Map<String, Envelope> m = new HashMap<>();
    for (Envelope e : batch) m.merge(e.deviceId(), e, (a, b) -> a.seq() > b.seq() ? a : b);
    List<Envelope> out = new ArrayList<>(m.values());
    out.sort((a, b) -> a.deviceId().compareTo(b.deviceId()));
    return out;
  }

  private static Tuple arrays(List<Envelope> list) {
    return BatchStore.resultColumns(list.stream().map(e -> new BatchStore.ResultRow(e.slotId(), 1, e, e.payload())).toList());
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }

  private static double median(long[] a) {
    long[] c = a.clone();
    Arrays.sort(c);
    return c[c.length / 2];
  }

  private static double mean(long[] a) {
    return Arrays.stream(a).average().orElse(0);
  }
}
