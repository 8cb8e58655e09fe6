package dev.inspection.bench;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * What idle queues cost the broker (issue 12, the low lane): RabbitMQ's CPU (beam.smp, from /proc) over a
 * window with no extra queues, then with {@code n} idle quorum queues declared like a slot queue, then with
 * {@code n} idle classic queues, each removed afterwards. Test code:
 * {@code java -cp "target/classes:target/test-classes:$(cat target/bench-classpath.txt)" dev.inspection.bench.LaneQueueCost [n] [windowSeconds] [rounds]}.
 * The broker's CPU is the whole server's, so other users of a shared broker add noise: rounds alternate.
 */
public final class LaneQueueCost {
  private LaneQueueCost() {}

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 256;
    int window = args.length > 1 ? Integer.parseInt(args[1]) : 60;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 1;
    long pid = beamPid();
    ConnectionFactory f = new ConnectionFactory();
    f.setHost("127.0.0.1");
    String prefix = "lanecost_" + UUID.randomUUID().toString().substring(0, 8);
    try (Connection c = f.newConnection("lane-queue-cost"); Channel ch = c.createChannel()) {
      for (int r = 1; r <= rounds; r++) {
        System.out.printf("round %d: none %.4f cores%n", r, cores(pid, window));
        for (String type : new String[] {"quorum", "classic"}) {
          for (int i = 0; i < n; i++) ch.queueDeclare(prefix + "." + type + "." + i, true, false, false, args(type));
          settle(pid, n + " new " + type + " queues");
          System.out.printf("round %d: %d idle %s queues %.4f cores%n", r, n, type, cores(pid, window));
          for (int i = 0; i < n; i++) ch.queueDelete(prefix + "." + type + "." + i);
        }
      }
    }
  }

  private static Map<String, Object> args(String type) {
    Map<String, Object> a = new HashMap<>();
    a.put("x-queue-type", type);
    a.put("x-single-active-consumer", true);
    a.put("x-max-length-bytes", 4L << 20);
    a.put("x-overflow", "reject-publish");
    if (type.equals("quorum")) a.put("x-delivery-limit", 20);
    return a;
  }

  /** The broker's CPU over {@code seconds}, in cores. */
  private static double cores(long pid, int seconds) throws Exception {
    long t0 = ticks(pid);
    long n0 = System.nanoTime();
    Thread.sleep(seconds * 1000L); // the measurement window itself: the broker's CPU over this time is the figure
    long t1 = ticks(pid);
    double wall = (System.nanoTime() - n0) / 1e9;
    return (t1 - t0) / 100.0 / wall; // USER_HZ = 100
  }

  /**
   * Waits, at most 60 s, until the broker's CPU is steady: two 2-second readings in a row within 15 % (or 0.02 cores)
   * of each other, so the window does not measure new queues or consumers settling in. Not steady by then: says so
   * and the window measures anyway.
   */
  static void settle(long pid, String what) throws IOException {
    long[] last = {ticks(pid), System.nanoTime()};
    double[] before = {-1};
    long start = System.nanoTime();
    try {
      Awaitility.await(what + " settling").atMost(Duration.ofSeconds(60)).pollDelay(Duration.ofSeconds(2)).pollInterval(Duration.ofSeconds(2))
          .until(() -> {
            long t = ticks(pid);
            long n = System.nanoTime();
            double cores = (t - last[0]) / 100.0 / ((n - last[1]) / 1e9);
            last[0] = t;
            last[1] = n;
            boolean steady = before[0] >= 0 && Math.abs(cores - before[0]) <= Math.max(0.02, 0.15 * before[0]);
            before[0] = cores;
            return steady;
          });
      System.out.printf("  %s: the broker's CPU steady after %.0f s (%.3f cores)%n", what, (System.nanoTime() - start) / 1e9, before[0]);
    } catch (ConditionTimeoutException e) {
      System.out.printf("  WARNING: %s: the broker's CPU not steady after 60 s (last %.3f cores); measuring anyway%n", what, before[0]);
    }
  }

  /** utime + stime of a process, in clock ticks (USER_HZ = 100). */
  static long ticks(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime + stime
  }

  /** RabbitMQ's beam.smp. */
  static long beamPid() throws IOException {
    try (var dirs = Files.list(Path.of("/proc"))) {
      return dirs.filter(p -> p.getFileName().toString().matches("\\d+"))
          .filter(p -> {
            try {
              return Files.readString(p.resolve("cmdline")).contains("beam.smp") && Files.readString(p.resolve("cmdline")).contains("rabbit");
            } catch (IOException e) {
              return false;
            }
          })
          .mapToLong(p -> Long.parseLong(p.getFileName().toString())).findFirst()
          .orElseThrow(() -> new IllegalStateException("no RabbitMQ beam.smp process"));
    }
  }
}
