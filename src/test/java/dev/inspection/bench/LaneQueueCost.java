package dev.inspection.bench;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

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
          Thread.sleep(10_000); // let the new queues settle before the window
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
