package dev.inspection.bench;

import dev.inspection.inventory.Device;
import dev.inspection.probe.ProbeSchedule;
import io.vertx.core.json.JsonObject;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Random;

/**
 * The probe's schedule alone (issue 11): CPU time of this thread per due device, {@code devices} devices every
 * {@code intervalMs}, polled every 50 ms as the probe does, over {@code seconds} of simulated time (the clock is an
 * argument, so the figure is CPU, not wall time, and a loaded machine changes it little). Prints ns per due device.
 * Run: {@code java -cp "target/classes:target/test-classes:$(cat target/bench-classpath.txt)" dev.inspection.bench.ScheduleBench 150000 5000 60}
 */
public final class ScheduleBench {
  private ScheduleBench() {}

  public static void main(String[] args) {
    int devices = args.length > 0 ? Integer.parseInt(args[0]) : 150_000;
    long intervalMs = args.length > 1 ? Long.parseLong(args[1]) : 5_000;
    long seconds = args.length > 2 ? Long.parseLong(args[2]) : 60;
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    for (int round = 1; round <= 3; round++) {
      ProbeSchedule s = new ProbeSchedule(10, new Random(round));
      JsonObject spec = new JsonObject();
      for (int i = 0; i < devices; i++) s.put(new Device("dev-" + i, i % 10 == 0 ? 1 : 2, "g", "sim", spec, intervalMs, "default", 0), 0);
      long due = 0;
      long cpu0 = mx.getCurrentThreadCpuTime();
      for (long t = 0; t <= seconds * 1000; t += 50) due += s.pollDue(t, Integer.MAX_VALUE).size();
      long cpu = mx.getCurrentThreadCpuTime() - cpu0;
      System.out.printf("round %d: %d devices every %d ms, %d s simulated: %d due, %.0f ns CPU per due device (%.1f ms CPU per simulated second)%n",
          round, devices, intervalMs, seconds, due, (double) cpu / due, cpu / 1e6 / seconds);
    }
  }
}
