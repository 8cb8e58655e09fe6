package dev.inspection.bench;

import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.state.AlertRules;
import dev.inspection.state.DerivedJson;
import dev.inspection.state.DerivedState;
import dev.inspection.state.HistoryPolicies;
import dev.inspection.state.PayloadProfiles;
import dev.inspection.state.SnapshotLayout;
import dev.inspection.worker.DeviceDirectory;
import dev.inspection.worker.StatePlanner;
import io.vertx.core.json.JsonObject;
import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Issue 11 goal 5: the heap a worker holds per device for its derived state (the slot's map of device id to
 * {@link DerivedState}, as {@code BatchHandler} keeps it), for devices that have seen a full flap ring: each
 * device's state is planned from 30 results (10 % DOWN) through {@link StatePlanner}; its snapshot, in the layout a
 * worker writes by default ({@link SnapshotLayout#COMPACT}), is what a new owner keeps of it until the device's first
 * result ("as loaded"), and the state read back from it what it keeps after. Heap measured after full GCs, before and after.
 */
final class DerivedMemory {
  private DerivedMemory() {}

  /** {@code java -cp ... dev.inspection.bench.DerivedMemory [devices]} runs it alone (CommitBench runs it at its end). */
  public static void main(String[] args) {
    print(args.length > 0 ? Integer.parseInt(args[0]) : 200_000);
  }

  static void print(int devices) {
    long before = usedAfterGc();
    Map<String, DerivedState> planned = planned(devices);
    long afterPlanned = usedAfterGc();
    Map<String, String> texts = new HashMap<>();
    for (Map.Entry<String, DerivedState> e : planned.entrySet()) texts.put(new String(e.getKey()), SnapshotLayout.COMPACT.encode(e.getValue()));
    long snapshotBytes = texts.values().stream().mapToLong(String::length).sum();
    planned = null;
    long textsOnly = usedAfterGc();
    Map<String, DerivedState> read = read(texts);
    texts = null;
    long readOnly = usedAfterGc();
    System.out.printf("worker derived state: %.0f bytes/device as planned, %.0f as loaded (the snapshot's text, until the device's first"
        + " result), %.0f as read from it (%d devices, device id and map entry included); snapshot %.0f characters/device%n",
        (double) (afterPlanned - before) / devices, (double) (textsOnly - before) / devices, (double) (readOnly - before) / devices, read.size(),
        (double) snapshotBytes / devices);
  }

  /** Each text read into its state under the loaded id, as {@code BatchHandler} keeps it (in a frame of its own: nothing of the walk stays reachable). */
  private static Map<String, DerivedState> read(Map<String, String> texts) {
    Map<String, DerivedState> read = new HashMap<>();
    for (Map.Entry<String, String> e : texts.entrySet()) read.put(e.getKey(), DerivedJson.decode(e.getValue()));
    return read;
  }

  /** Each device's state after 30 results, as the slot's memory holds it. */
  static Map<String, DerivedState> planned(int devices) {
    Random rnd = new Random(11);
    Map<String, DerivedState> memory = new HashMap<>();
    long clock = System.currentTimeMillis() - 3_600_000;
    for (int d = 0; d < devices; d++) {
      String id = String.format("sim-%07d", d);
      List<Envelope> batch = new ArrayList<>(30);
      for (int s = 1; s <= 30; s++) {
        long at = clock + s * 60_000L;
        batch.add(new Envelope(Envelope.messageId("bench", at, id, s), id, 0, 1, 1, 1, "bench", at, s, Instant.ofEpochMilli(at), Priority.NORMAL,
            new JsonObject().put("status", rnd.nextDouble() < 0.1 ? "DOWN" : "UP").put("latency_ms", rnd.nextInt(500))));
      }
      memory.putAll(StatePlanner.plan(batch, memory, Map.of(id, new DeviceDirectory.Info(2, PayloadProfiles.DEFAULT, true)), AlertRules::forPriority,
          HistoryPolicies.EVERY).next());
    }
    return memory;
  }

  private static long usedAfterGc() {
    for (int i = 0; i < 3; i++) System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
