package dev.inspection.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Library;
import com.sun.jna.Native;
import dev.inspection.inventory.Device;
import dev.inspection.inventory.TargetPolicy;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Real ICMP echo (issue 13 item 1) through the probe's {@link Checker}: against 127.0.0.1 and ::1, and against an address that
 * never answers — 127.0.0.1 of a network namespace this test creates with {@code icmp_echo_ignore_all} set there (a
 * per-namespace sysctl: the machine's own is untouched); the engine's socket is opened inside that namespace. The
 * unprivileged datagram socket is tested the same way, in a namespace whose own ping_group_range allows it. Needs root
 * (CAP_NET_RAW for the raw socket, CAP_SYS_ADMIN for the namespaces) and {@code ip}.
 */
class IcmpCheckIT {
  private static final long DEADLINE_S = 60; // a liveness bound: the machine is shared
  private static Vertx vertx;

  @BeforeAll
  static void start() {
    vertx = Vertx.vertx();
  }

  @AfterAll
  static void stop() throws Exception {
    vertx.close().await(30, TimeUnit.SECONDS);
  }

  private static Device icmp(String id, String host, int count, int intervalMs, int timeoutMs) {
    JsonObject spec = new JsonObject().put("host", host).put("count", count).put("interval_ms", intervalMs).put("timeout_ms", timeoutMs);
    return Device.fromJson(new JsonObject().put("device_id", id).put("check_type", "icmp").put("check_spec", spec), "default", 1000);
  }

  private static Checker checker(TargetPolicy policy, Supplier<IcmpEngine> engine) {
    return new Checker(vertx, 2000, 0, new Random(), policy, 65_536, engine);
  }

  /** Runs {@code devices}' checks at once on one context (as the probe does), waits for all of them. */
  private static List<JsonObject> check(Checker c, List<Device> devices) throws Exception {
    CompletableFuture<List<JsonObject>> all = new CompletableFuture<>();
    Context ctx = vertx.getOrCreateContext();
    ctx.runOnContext(v -> {
      List<Future<JsonObject>> fs = new ArrayList<>();
      for (Device d : devices) fs.add(c.check(d));
      Future.all(fs).onComplete(ar -> {
        if (ar.failed()) all.completeExceptionally(ar.cause());
        else all.complete(ar.result().list());
      });
    });
    return all.get(DEADLINE_S, TimeUnit.SECONDS);
  }

  @Test
  void loopbackAnswersEveryEchoWithItsLatencyOverIcmpv4AndIcmpv6() throws Exception {
    Checker c = checker(TargetPolicy.open(), IcmpEngine::open);
    try {
      for (String host : List.of("127.0.0.1", "::1")) {
        JsonObject r = check(c, List.of(icmp("lo", host, 3, 20, 1000))).get(0);
        System.out.println("icmp " + host + ": " + r.encode());
        assertEquals("icmp", r.getString("check"));
        assertEquals("UP", r.getString("status"), r.encode());
        assertEquals(0.0, r.getDouble("loss_pct"));
        assertEquals(3, r.getInteger("sent"));
        assertEquals(3, r.getInteger("received"));
        double latency = r.getDouble("latency_ms");
        assertTrue(latency >= 0 && latency < 1000, "latency " + latency + " ms within the 1000 ms timeout");
        assertTrue(r.getDouble("latency_min_ms") <= latency && latency <= r.getDouble("latency_max_ms"), r.encode());
      }
      // both families at once through the one engine, replies matched to their own family's echoes
      List<JsonObject> both = check(c, List.of(icmp("v4", "127.0.0.1", 2, 10, 1000), icmp("v6", "[::1]", 2, 10, 1000)));
      for (JsonObject b : both) assertEquals(2, b.getInteger("received"), b.encode());
    } finally {
      c.close();
    }
  }

  @Test
  void anIpv6AddressThatNeverAnswersTimesOutWithFullLoss() throws Exception {
    silentThenAnswering("icmp6it-", "net.ipv6.icmp.echo_ignore_all", "::1");
  }

  @Test
  void theTargetPolicyRefusesADeniedAddressBeforeAnyEchoLeaves() throws Exception {
    Checker c = checker(TargetPolicy.of("", "127.0.0.0/8", "allow", "deny"), IcmpEngine::open);
    try {
      JsonObject r = check(c, List.of(icmp("lo", "127.0.0.1", 1, 20, 1000))).get(0);
      assertEquals("DOWN", r.getString("status"));
      assertTrue(r.getString("error").contains("denied range 127.0.0.0/8"), r.encode());
      assertNull(r.getValue("sent"), "nothing was sent");
    } finally {
      c.close();
    }
  }

  @Test
  void anAddressThatNeverAnswersTimesOutWithFullLoss() throws Exception {
    silentThenAnswering("icmpit-", "net.ipv4.icmp_echo_ignore_all", "127.0.0.1");
  }

  /** {@code host} in a namespace of its own that ignores echoes ({@code ignoreSysctl}=1), then answers them again. */
  private static void silentThenAnswering(String nsPrefix, String ignoreSysctl, String host) throws Exception {
    String ns = nsPrefix + ProcessHandle.current().pid();
    run("ip", "netns", "add", ns);
    Checker c = null;
    try {
      run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up");
      run("ip", "netns", "exec", ns, "sysctl", "-qw", ignoreSysctl + "=1");
      IcmpEngine engine = inNamespace(ns, IcmpEngine::open);
      assertEquals("raw", host.contains(":") ? engine.socketKind6() : engine.socketKind(), "a new namespace's ping_group_range is '1 0': nobody");
      c = checker(TargetPolicy.open(), () -> engine);
      long t0 = System.nanoTime();
      JsonObject r = check(c, List.of(icmp("silent", host, 2, 50, 300))).get(0);
      System.out.printf("icmp to a silent %s: %s after %d ms%n", host, r.encode(), (System.nanoTime() - t0) / 1_000_000);
      assertEquals("DOWN", r.getString("status"), r.encode());
      assertEquals(100.0, r.getDouble("loss_pct"));
      assertEquals(2, r.getInteger("sent"));
      assertEquals(0, r.getInteger("received"));
      assertNull(r.getValue("latency_ms"));
      assertTrue(r.getString("error").contains("no echo reply within 300 ms"), r.encode());

      // the same socket, the namespace answering again: the silence above was the target's, not the engine's
      run("ip", "netns", "exec", ns, "sysctl", "-qw", ignoreSysctl + "=0");
      JsonObject up = check(c, List.of(icmp("answering", host, 2, 50, 1000))).get(0);
      assertEquals("UP", up.getString("status"), up.encode());
      assertEquals(2, up.getInteger("received"));
    } finally {
      if (c != null) c.close();
      run("ip", "netns", "del", ns);
    }
  }

  @Test
  void whereThePingGroupRangeAllowsItTheEngineUsesAnUnprivilegedDatagramSocket() throws Exception {
    // net.ipv4.ping_group_range is per network namespace: allowed in the test's own, the machine's stays as it is
    String ns = "icmpdg-" + ProcessHandle.current().pid();
    run("ip", "netns", "add", ns);
    Checker c = null;
    try {
      run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up");
      run("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ping_group_range=0 2147483647");
      IcmpEngine engine = inNamespace(ns, IcmpEngine::open);
      assertEquals("datagram", engine.socketKind());
      assertEquals("datagram", engine.socketKind6(), "the same sysctl opens ICMPv6 datagram sockets");
      c = checker(TargetPolicy.open(), () -> engine);
      List<Device> devices = new ArrayList<>();
      for (int i = 0; i < 5000; i++) devices.add(icmp("dg" + i, "127.0.0.1", 3, 10, 2000));
      long t0 = System.nanoTime();
      List<JsonObject> rs = check(c, devices);
      double secs = (System.nanoTime() - t0) / 1e9;
      System.out.printf("icmp (datagram socket): 5000 checks of 3 echoes to 127.0.0.1 in %.2f s = %.0f checks/s%n", secs, 5000 / secs);
      for (JsonObject r : rs) {
        assertEquals("UP", r.getString("status"), r.encode());
        assertEquals(3, r.getInteger("received"), r.encode());
        assertEquals(0.0, r.getDouble("loss_pct"));
      }
      JsonObject v6 = check(c, List.of(icmp("dg6", "::1", 2, 10, 1000))).get(0);
      assertEquals(2, v6.getInteger("received"), v6.encode());
    } finally {
      if (c != null) c.close();
      run("ip", "netns", "del", ns);
    }
  }

  @Test
  void oneEngineRunsThousandsOfChecksAtOnce() throws Exception {
    Checker c = checker(TargetPolicy.open(), IcmpEngine::open);
    try {
      check(c, List.of(icmp("warm", "127.0.0.1", 1, 10, 1000))); // opens the engine
      for (String host : new String[] {"127.0.0.1", "::1"}) {
        for (int count : new int[] {1, 3}) {
          List<Device> devices = new ArrayList<>();
          for (int i = 0; i < 5000; i++) devices.add(icmp("d" + i, host, count, 10, 2000));
          long t0 = System.nanoTime();
          List<JsonObject> rs = check(c, devices);
          double s = (System.nanoTime() - t0) / 1e9;
          long up = rs.stream().filter(r -> "UP".equals(r.getString("status"))).count();
          long received = rs.stream().mapToLong(r -> r.getInteger("received", 0)).sum();
          System.out.printf("icmp: 5000 checks of %d echo(es) to %s in %.2f s = %.0f checks/s (%d UP, %d replies)%n",
              count, host, s, 5000 / s, up, received);
          assertEquals(5000, up);
          assertEquals(5000L * count, received, "no echo lost on loopback");
        }
      }
    } finally {
      c.close();
    }
  }

  /** The calling thread's libc calls that switch network namespace. */
  interface Ns extends Library {
    int open(String path, int flags);

    int setns(int fd, int nstype);

    int close(int fd);
  }

  private static final int CLONE_NEWNET = 0x40000000;

  /** {@code what}, run on a thread of its own that is in namespace {@code ns} meanwhile. */
  private static <T> T inNamespace(String ns, Supplier<T> what) throws Exception {
    Ns libc = Native.load("c", Ns.class);
    CompletableFuture<T> out = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      int target = libc.open("/var/run/netns/" + ns, 0);
      if (target < 0 || libc.setns(target, CLONE_NEWNET) != 0) {
        out.completeExceptionally(new IllegalStateException("cannot enter network namespace " + ns + ": errno " + Native.getLastError()));
        return;
      }
      libc.close(target);
      try {
        out.complete(what.get());
      } catch (RuntimeException e) {
        out.completeExceptionally(e);
      } // the thread ends here, and its namespace with it
    }, "in-" + ns);
    t.start();
    return out.get(DEADLINE_S, TimeUnit.SECONDS);
  }

  private static void run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    assertTrue(p.waitFor(DEADLINE_S, TimeUnit.SECONDS), String.join(" ", cmd) + " did not end");
    String out = new String(p.getInputStream().readAllBytes());
    assertEquals(0, p.exitValue(), String.join(" ", cmd) + ": " + out);
  }
}
