package dev.inspection.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How long each step of a slot changing owners takes on a worker (issue 14: a takeover is done when the new owner
 * commits, not when its lease says ACTIVE): the old owner's release, the new owner's derived-state load, and from
 * taking the slot up (ACTIVE here) to its consumers open on the broker, to its first delivery and to its first commit.
 * Each a p50/p99 timer over 5 minutes with histogram buckets ({@link Latency}).
 */
public final class SlotMoves {
  private final Latency released;
  private final Latency loaded;
  private final Latency opened;
  private final Latency firstDelivery;
  private final Latency firstCommit;

  SlotMoves(MeterRegistry registry) {
    Duration window = Duration.ofMinutes(5);
    released = new Latency(registry, "worker_slot_release", "time for the old owner to stop, commit and ack a moving slot", window, b -> b);
    loaded = new Latency(registry, "worker_snapshot_load", "time to read a slot's devices' derived state from their snapshots before it consumes (INV-10): its own pages, not"
        + " the wait for the slots a takeover loads before it", window, b -> b);
    opened = new Latency(registry, "worker_slot_open", "time from taking a slot up (derived state loaded, ACTIVE here) until its consumers are open"
        + " on the broker", window, b -> b);
    firstDelivery = new Latency(registry, "worker_slot_first_delivery", "time from taking a slot up (derived state loaded, ACTIVE here) until the"
        + " broker delivered its first message here", window, b -> b);
    firstCommit = new Latency(registry, "worker_slot_first_commit", "time from taking a slot up (derived state loaded, ACTIVE here) until its first"
        + " batch committed here", window, b -> b);
  }

  /** The old owner stopped, committed and acked a moving slot in {@code millis}. */
  public void released(long millis) {
    released.record(millis, TimeUnit.MILLISECONDS);
  }

  /** A slot's derived state loaded before consuming it (INV-10), its own pages in {@code millis}. */
  public void loaded(long millis) {
    loaded.record(millis, TimeUnit.MILLISECONDS);
  }

  /** A slot taken up here had its consumers open on the broker {@code millis} later. */
  public void opened(long millis) {
    opened.record(millis, TimeUnit.MILLISECONDS);
  }

  /** A slot taken up here received its first delivery {@code millis} later. */
  public void firstDelivery(long millis) {
    firstDelivery.record(millis, TimeUnit.MILLISECONDS);
  }

  /** A slot taken up here committed its first batch {@code millis} later. */
  public void firstCommit(long millis) {
    firstCommit.record(millis, TimeUnit.MILLISECONDS);
  }
}
