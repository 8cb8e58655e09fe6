package dev.inspection.bench;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What one message costs RabbitMQ at the node's queue shape (issue 11): the same fixed message rate, with
 * publisher confirms (published every {@code tickMs}, paced) and one consumer per queue that acks with
 * {@code multiple=true} every {@code ackMs} (as a worker batch does), spread over {@code few} quorum queues and then over {@code many} (the node's 256 slots x 2
 * priorities), and then the same results in messages {@code k} times bigger and {@code k} times fewer. Prints
 * RabbitMQ's CPU (beam.smp, /proc) per message and per result of each shape, measured one after the other in
 * one run; queues declared like slot queues and deleted afterwards. Test code:
 * {@code java -cp "target/classes:target/test-classes:$(cat target/bench-classpath.txt)" dev.inspection.bench.BrokerShapeCost [msgPerSec] [seconds] [few] [many] [k] [ackMs] [tickMs] [shapes]}
 * (defaults 1400 30 64 512 4 20 10 abc: shapes a = few queues, b = many, c = many with k-fold messages, d = c's message
 * rate with b's 400-byte bodies, so that c against d is what the bytes cost). The broker's CPU is the whole server's: run it
 * on a quiet machine.
 *
 * <p>Measured 2026-12-03 (2 cores, quiet): 64 queues 350 / 1,400 / 5,600 msg/s: 964 / 601 / 237 µs per message;
 * 512 queues 700 / 1,400 / 2,800 msg/s: 1,023 / 689 / 493 µs; 512 queues, 350 messages/s of 4 results: 380 µs
 * per result. PerfTest at saturation (the bench's baseline) costs 35–65 µs per message: the broker's cost per
 * message falls steeply with its load, and the number of queues matters less than the number of messages.
 * 2026-12-06, {@code 24000 20 64 512 20 20 10 cd} (1,200 msg/s over 512 queues, 20 results each): 8,000-byte bodies 864
 * µs per message, 400-byte bodies 898: the bytes cost nothing measurable, the messages everything.
 */
public final class BrokerShapeCost {
  private BrokerShapeCost() {}

  private static int ackMs;
  private static long tickMs;

  public static void main(String[] args) throws Exception {
    int rate = args.length > 0 ? Integer.parseInt(args[0]) : 1400;
    int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 30;
    int few = args.length > 2 ? Integer.parseInt(args[2]) : 64;
    int many = args.length > 3 ? Integer.parseInt(args[3]) : 512;
    int k = args.length > 4 ? Integer.parseInt(args[4]) : 4;
    ackMs = args.length > 5 ? Integer.parseInt(args[5]) : 20;
    tickMs = args.length > 6 ? Integer.parseInt(args[6]) : 10;
    String only = args.length > 7 ? args[7] : "abc";
    long pid = LaneQueueCost.beamPid();
    ConnectionFactory f = new ConnectionFactory();
    f.setHost("127.0.0.1");
    String prefix = "shapecost_" + UUID.randomUUID().toString().substring(0, 8);
    System.out.printf("RabbitMQ CPU per message, %d s windows, confirms, one consumer per quorum queue, multiple acks every %d ms, publishes every %d ms%n", seconds, ackMs, tickMs);
    if (only.contains("a")) shape(f, pid, prefix + ".a", few, rate, 400, 1, seconds);
    if (only.contains("b")) shape(f, pid, prefix + ".b", many, rate, 400, 1, seconds);
    if (only.contains("c")) shape(f, pid, prefix + ".c", many, rate / k, 400 * k, k, seconds);
    if (only.contains("d")) shape(f, pid, prefix + ".d", many, rate / k, 400, k, seconds);
  }

  /** One shape: {@code queues} queues, {@code rate} messages/s of {@code bytes} bytes carrying {@code results} results each. */
  private static void shape(ConnectionFactory f, long pid, String prefix, int queues, int rate, int bytes, int results, int seconds)
      throws Exception {
    AtomicLong consumed = new AtomicLong();
    AtomicLong published = new AtomicLong();
    ScheduledExecutorService timer = Executors.newScheduledThreadPool(2);
    try (Connection pubConn = f.newConnection("shape-pub"); Connection subConn = f.newConnection("shape-sub")) {
      Channel admin = pubConn.createChannel();
      for (int i = 0; i < queues; i++) admin.queueDeclare(prefix + "." + i, true, false, false, slotQueueArgs());
      for (int i = 0; i < queues; i++) {
        Channel ch = subConn.createChannel();
        ch.basicQos(100);
        AtomicLong lastTag = new AtomicLong();
        ch.basicConsume(prefix + "." + i, false, new DefaultConsumer(ch) {
          @Override
          public void handleDelivery(String tag, Envelope env, AMQP.BasicProperties p, byte[] body) {
            lastTag.set(env.getDeliveryTag());
            consumed.incrementAndGet();
          }
        });
        AtomicLong acked = new AtomicLong();
        timer.scheduleAtFixedRate(() -> {
          long t = lastTag.get();
          if (t > acked.get()) {
            try {
              ch.basicAck(t, true);
              acked.set(t);
            } catch (Exception ignored) {
              // the channel closed at the end
            }
          }
        }, ackMs, ackMs, TimeUnit.MILLISECONDS);
      }
      int channels = 4;
      List<Channel> pubs = new ArrayList<>();
      for (int c = 0; c < channels; c++) {
        Channel ch = pubConn.createChannel();
        ch.confirmSelect();
        ch.addConfirmListener((tag, multiple) -> { }, (tag, multiple) -> System.out.println("nack " + tag));
        pubs.add(ch);
      }
      byte[] body = new byte[bytes];
      AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().deliveryMode(2).contentType("application/json").build();
      double perTick = rate * tickMs / 1000.0;
      long[] next = {0};
      double[] owed = {0};
      timer.scheduleAtFixedRate(() -> {
        owed[0] += perTick;
        try {
          while (owed[0] >= 1) {
            int q = (int) (next[0]++ % queues);
            Channel ch = pubs.get(q % channels);
            synchronized (ch) {
              ch.basicPublish("", prefix + "." + q, false, props, body);
            }
            published.incrementAndGet();
            owed[0] -= 1;
          }
        } catch (Exception e) {
          System.out.println("publish failed: " + e.getMessage());
        }
      }, tickMs, tickMs, TimeUnit.MILLISECONDS);
      LaneQueueCost.settle(pid, queues + " queues at " + rate + " msg/s"); // queues, consumers, the first publishes
      long p0 = published.get();
      long c0 = consumed.get();
      long t0 = LaneQueueCost.ticks(pid);
      long n0 = System.nanoTime();
      Thread.sleep(seconds * 1000L); // the measurement window itself: the broker's CPU over this time is the figure
      long t1 = LaneQueueCost.ticks(pid);
      double wall = (System.nanoTime() - n0) / 1e9;
      double msgs = (published.get() - p0) / wall;
      double cores = (t1 - t0) / (double) 100.0 / wall;
      System.out.printf("%4d queues, %5.0f msg/s published, %5.0f consumed, %d results each (%d bytes): rabbitmq %.3f cores = %.0f µs/message, %.0f µs/result%n",
          queues, msgs, (consumed.get() - c0) / wall, results, bytes, cores, cores * 1e6 / msgs, cores * 1e6 / msgs / results);
      timer.shutdownNow();
      timer.awaitTermination(5, TimeUnit.SECONDS);
      for (int i = 0; i < queues; i++) admin.queueDelete(prefix + "." + i);
    } finally {
      timer.shutdownNow();
    }
  }

  private static Map<String, Object> slotQueueArgs() {
    Map<String, Object> a = new HashMap<>();
    a.put("x-queue-type", "quorum");
    a.put("x-single-active-consumer", true);
    a.put("x-overflow", "reject-publish");
    a.put("x-delivery-limit", 20);
    return a;
  }
}
