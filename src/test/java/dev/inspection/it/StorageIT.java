package dev.inspection.it;

import static dev.inspection.it.ProbeOutboxIT.with;
import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.inspection.node.Node;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Bounded storage on the probe (issue 12 items 4 and 6): shedding by priority at the outbox watermarks, and a full disk. */
class StorageIT {

  /** 5 critical, 20 normal and 20 low simulated devices, checked every 200 ms. */
  private static Path inventory(TestEnv env) throws IOException {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < 45; i++) {
      int p = i < 5 ? 1 : i < 25 ? 2 : 3;
      sb.append(new JsonObject().put("device_id", "dev-p" + p + "-" + i).put("check_type", "sim").put("check_spec", new JsonObject().put("fail_rate", 0))
          .put("priority", p).put("interval_ms", 200).put("probe_group", "default").encode()).append('\n');
    }
    Path f = env.dataDir.resolve("devices.jsonl");
    Files.writeString(f, sb);
    return f;
  }

  @Test
  void overItsRowWatermarkTheOutboxShedsLowThenNormalNeverCriticalAndTheShedReachTheApiAndTheLedger() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      String probeId = env.name + "-probe";
      // small queues (the low lane's too) fill at once with no worker; then the outbox grows to its 300-row watermark. The probe's own
      // backpressure mode would pause low devices after the first refused publish or once a row waits 8 s (FleetModeIT covers that): a
      // 1 ms nack window and an hour's outbox age keep it out of the way, so this test sees the watermark alone. A nack in the same
      // millisecond as the mode's look still counts (a CI run entered BACKPRESSURE_HIGH so, paused the low devices and never shed a low
      // result): no dwell, so the next look, a second later, leaves the mode again
      Map<String, String> small = Map.of("broker.queue.budget.bytes", "80000", "broker.queue.high.weight", "1", "outbox.publish.batch.bytes", "4096", "outbox.shed.report.ms", "500",
          "queue.low.max.bytes", "65536", "queue.low.max.length", "5", "probe.mode.nack.window.ms", "1", "probe.mode.outbox.age.high.ms", "3600000",
          "probe.mode.min.dwell.ms", "0");
      Node probe = env.start(with(small, "role", "probe", "node.id", probeId, "probe.inventory.file", inventory(env).toString(),
          "outbox.max.rows", "300"));
      awaitTrue(Duration.ofSeconds(60), "low and then normal results shed",
          () -> probe.metrics().count("probe_outbox_shed_total", "priority", "3") > 0 && probe.metrics().count("probe_outbox_shed_total", "priority", "2") > 0);
      assertEquals(0, probe.metrics().count("probe_outbox_shed_total", "priority", "1"), "critical results are never shed at a watermark");
      // the watermark bounds what it may shed: the 5 critical devices' rows (25 a second) are never shed and pile up while no worker
      // runs, so the whole count grows with the time it took to shed low and normal rows (1,135 and 1,363 when that took 50 s)
      long sheddable = env.outboxUnconfirmed(probeId, false);
      assertTrue(sheddable <= 300 + 500, "the outbox's sheddable rows stay near its watermark: " + sheddable + " (" + env.outboxUnconfirmed(probeId)
          + " with the critical ones)");

      env.start(with(small, "role", "worker", "node.id", env.name + "-w"));
      Ledger.Report r = env.drainAndBalance(probe, probeId, small);
      System.out.println("shed at a 300-row watermark: " + r);
      assertTrue(r.shed().size() > 0, r.toString());
      assertTrue(r.shed().stream().noneMatch(id -> id.contains(":dev-p1-")), "no critical result among the shed");

      // the probe's per device-minute ledger reached the schedulers through the shed queue
      Map<Integer, Long> probeLedger = shedLedger(env, probeId);
      int port = env.scheduler().httpPort();
      awaitTrue(Duration.ofSeconds(30), "the shed counts in the API equal the probe's ledger", () -> {
        JsonObject byPriority = new JsonObject(TestEnv.http(port, "GET", "/api/v1/shed").getValue()).getJsonObject("by_priority");
        return byPriority.getLong("3", 0L).equals(probeLedger.getOrDefault(3, 0L)) && byPriority.getLong("2", 0L).equals(probeLedger.getOrDefault(2, 0L))
            && !byPriority.containsKey("1");
      });
      assertEquals(r.shed().size(), probeLedger.values().stream().mapToLong(Long::longValue).sum(), "one ledger count per shed row");
      JsonObject oneDevice = new JsonObject(TestEnv.http(port, "GET", "/api/v1/shed?device=dev-p3-30").getValue());
      assertTrue(oneDevice.getJsonArray("minutes").stream().allMatch(m -> ((JsonObject) m).getString("device_id").equals("dev-p3-30")), oneDevice.encode());
    }
  }

  private static Map<Integer, Long> shedLedger(TestEnv env, String probeId) throws Exception {
    Map<Integer, Long> out = new HashMap<>();
    try (var c = DriverManager.getConnection("jdbc:sqlite:" + env.dataDir.resolve("outbox-" + probeId + ".db"));
         Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT priority, sum(count) FROM shed_ledger GROUP BY priority")) {
      while (rs.next()) out.put(rs.getInt(1), rs.getLong(2));
    }
    return out;
  }

  /**
   * A real full disk: the probe's data.dir on a 16 MiB tmpfs (needs root, as CI has), filled up while it runs.
   * The probe stays alive, says not-ready with the reason, counts the failed appends, keeps and delivers
   * what was durable, and is ready again once there is room.
   */
  @Test
  void aFullDiskUnderTheOutboxKeepsTheProbeAliveNotReadyWithTheReasonAndLosesNothingDurable() throws Exception {
    assumeTrue("root".equals(System.getProperty("user.name")), "mounting a tmpfs needs root");
    try (TestEnv env = new TestEnv(2)) {
      Path mnt = env.dataDir.resolve("tmpfs");
      Files.createDirectories(mnt);
      run("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", mnt.toString());
      try {
        String probeId = env.name + "-probe";
        Node probe = env.start(Map.of("role", "probe", "node.id", probeId, "data.dir", mnt.toString(), "probe.sim.devices", "20",
            "probe.interval.ms", "500", "outbox.min.free.bytes", "0"));
        int port = probe.httpPort();
        awaitTrue(Duration.ofSeconds(30), "the probe is ready", () -> TestEnv.http(port, "GET", "/health/ready").getKey() == 200);
        Path filler = mnt.resolve("filler");
        fill(filler);
        awaitTrue(Duration.ofSeconds(30), "appends fail on the full disk",
            () -> probe.metrics().count("probe_outbox_append_failures_total") > 0);
        var ready = TestEnv.http(port, "GET", "/health/ready");
        assertEquals(503, ready.getKey(), ready.getValue());
        String reason = new JsonObject(ready.getValue()).getJsonObject("reasons").getString("probe.outbox");
        assertTrue(reason.contains("full"), reason);
        assertEquals(200, TestEnv.http(port, "GET", "/health/live").getKey(), "the probe stays alive");
        System.out.println("full disk: " + (long) probe.metrics().count("probe_outbox_append_failures_total") + " results not written; ready says " + reason);

        Files.delete(filler);
        awaitTrue(Duration.ofSeconds(30), "ready again once there is room", () -> TestEnv.http(port, "GET", "/health/ready").getKey() == 200);
        // everything that was durable is delivered: the file moves off the tmpfs to where the test's ledger reads it
        env.start(Map.of("role", "worker", "node.id", env.name + "-w"));
        env.stop(probe);
        for (String suffix : new String[] {".db", ".db-wal"}) {
          // the file with its WAL: a checkpoint cut short by the full disk leaves pages only in the WAL
          Path f = mnt.resolve("outbox-" + probeId + suffix);
          if (Files.exists(f)) Files.copy(f, env.dataDir.resolve(f.getFileName()));
        }
        Node replay = env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "0"));
        env.awaitDelivered(probeId, Duration.ofSeconds(120));
        Ledger.Report r = env.ledger(probeId);
        assertTrue(r.clean(), r.toString());
        assertTrue(r.produced() > 0, r.toString());
        env.stop(replay);
      } finally {
        run("umount", "-l", mnt.toString());
      }
    }
  }

  /**
   * A real fsync error: the probe's JVM runs under strace, which makes fsync/fdatasync calls 60 to 1,060
   * fail with EIO (the drill of issue 12: {@code strace -e inject=fsync:error=EIO}). The probe stays alive,
   * says not-ready with the reason while its commits fail, is ready again after, and what it wrote is
   * delivered without a (device, seq) or an id used twice.
   */
  @Test
  void fsyncErrorsUnderTheOutboxKeepTheProbeAliveNotReadyWithTheReasonAndLoseNothingDurable() throws Exception {
    assumeTrue(new java.io.File("/usr/bin/strace").canExecute(), "needs strace");
    try (TestEnv env = new TestEnv(2)) {
      String probeId = env.name + "-probe";
      int port;
      try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
        port = s.getLocalPort();
      }
      List<String> strace = List.of("strace", "-f", "--seccomp-bpf", "-qq", "-o", env.dataDir.resolve("strace.out").toString(),
          "-e", "trace=fsync,fdatasync", "-e", "inject=fsync,fdatasync:error=EIO:when=60..1060");
      AtomicReference<String> reason = new AtomicReference<>();
      try (ChildNode probe = ChildNode.start(env, "probe-eio", Map.of("role", "probe", "node.id", probeId, "http.port", Integer.toString(port),
          "probe.sim.devices", "20", "probe.interval.ms", "200"), Map.of(), strace)) {
        awaitTrue(Duration.ofSeconds(60), "not-ready with the outbox's reason while fsync fails", () -> {
          JsonObject body = new JsonObject(TestEnv.http(port, "GET", "/health/ready").getValue());
          if (!"DOWN".equals(body.getJsonObject("checks").getString("probe.outbox"))) return false;
          reason.set(body.getJsonObject("reasons").getString("probe.outbox"));
          return true;
        });
        awaitTrue(Duration.ofSeconds(90), "ready again once fsync works", () -> TestEnv.http(port, "GET", "/health/ready").getKey() == 200);
        assertTrue(reason.get().contains("IOERR"), reason.get());
        assertTrue(probe.alive(), "the probe stayed alive");
        String metrics = TestEnv.http(port, "GET", "/metrics").getValue();
        assertTrue(metrics.contains("probe_outbox_append_failures_total"), "failures counted");
        System.out.println("fsync EIO: not-ready with '" + reason.get() + "', ready again; " + metrics.lines()
            .filter(l -> l.startsWith("probe_outbox_append_failures_total")).findFirst().orElse("?"));
        probe.terminate(Duration.ofSeconds(30));
      }
      env.start(Map.of("role", "worker", "node.id", env.name + "-w"));
      Node replay = env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "0"));
      env.awaitDelivered(probeId, Duration.ofSeconds(120));
      Ledger.Report r = env.ledger(probeId);
      assertTrue(r.clean() && r.produced() == r.stored(), r.toString());
      assertEquals(r.produced(), env.queryLong("SELECT count(DISTINCT (device_id, seq)) FROM $S.device_status_history"), "no (device, seq) used twice");
      env.stop(replay);
    }
  }

  /** Writes until the file system refuses (ENOSPC). */
  private static void fill(Path file) throws IOException {
    byte[] chunk = new byte[4096];
    try (OutputStream out = Files.newOutputStream(file)) {
      while (true) out.write(chunk);
    } catch (IOException full) {
      // the disk is full: that was the point
    }
  }

  private static void run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).inheritIO().start();
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) throw new IllegalStateException(String.join(" ", cmd) + " failed");
  }
}
