package dev.inspection.messaging;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;

/**
 * The broker's total byte budget for the high and normal slot queues (the quorum lanes; the low lane has
 * its own, much smaller limits: {@code queue.low.max.bytes}), split over them with the critical lane favoured: a
 * high queue gets {@code highWeight} shares, every other queue one, so with 256 slots, 8 GiB and weight 4
 * a normal queue may hold 6.4 MiB and a high queue 25.6 MiB. Overflow stays {@code reject-publish}
 * (DESIGN.md D3): the probe sees the refusal and keeps the row in its outbox. Pure.
 */
public record QueueBudget(long totalBytes, int highWeight, int slots) {
  /** The lanes the budget covers. */
  private static final Priority[] BUDGETED = {Priority.HIGH, Priority.NORMAL};

  /** A queue smaller than this would refuse even a single batch message. */
  static final long MIN_QUEUE_BYTES = 4096;

  public QueueBudget {
    if (slots < 1) throw new IllegalArgumentException("slots must be positive: " + slots);
    if (highWeight < 1) throw new IllegalArgumentException("highWeight must be at least 1: " + highWeight);
  }

  /** The budget a configuration gives; a budget too small for its slot count, or a queue
   * smaller than one batch message, stops start-up naming the keys. */
  public static QueueBudget of(Config c) {
    if (c.getInt(Keys.BROKER_QUEUE_HIGH_WEIGHT) < 1) {
      throw new ConfigException(Keys.BROKER_QUEUE_HIGH_WEIGHT.name() + " must be at least 1 (shares of a high queue against a normal one's 1)");
    }
    QueueBudget b = new QueueBudget(c.getLong(Keys.BROKER_QUEUE_BUDGET_BYTES), c.getInt(Keys.BROKER_QUEUE_HIGH_WEIGHT), c.getInt(Keys.SLOTS_TOTAL));
    if (b.bytes(Priority.NORMAL) < MIN_QUEUE_BYTES) {
      throw new ConfigException(Keys.BROKER_QUEUE_BUDGET_BYTES.name() + "=" + b.totalBytes() + " leaves a normal queue " + b.bytes(Priority.NORMAL)
          + " bytes over " + b.slots() + " slots; give at least " + b.minimumTotal() + " (" + MIN_QUEUE_BYTES + " bytes per share)");
    }
    // a batch message larger than its queue's limit is refused even by an empty queue: its rows would wait in the outbox forever
    long batch = c.getInt(Keys.OUTBOX_PUBLISH_BATCH_BYTES);
    if (b.bytes(Priority.NORMAL) < batch) {
      throw new ConfigException(Keys.BROKER_QUEUE_BUDGET_BYTES.name() + "=" + b.totalBytes() + " leaves a normal queue " + b.bytes(Priority.NORMAL)
          + " bytes, less than one batch message (" + Keys.OUTBOX_PUBLISH_BATCH_BYTES.name() + "=" + batch + "); give at least "
          + b.totalBytes() / b.bytes(Priority.NORMAL) * batch + " or lower " + Keys.OUTBOX_PUBLISH_BATCH_BYTES.name());
    }
    if (c.getLong(Keys.QUEUE_LOW_MAX_BYTES) < batch) {
      throw new ConfigException(Keys.QUEUE_LOW_MAX_BYTES.name() + "=" + c.getLong(Keys.QUEUE_LOW_MAX_BYTES) + " is less than one batch message ("
          + Keys.OUTBOX_PUBLISH_BATCH_BYTES.name() + "=" + batch + "): raise it or lower " + Keys.OUTBOX_PUBLISH_BATCH_BYTES.name());
    }
    return b;
  }

  /** The same limit for every queue (tests that need one small queue). */
  public static QueueBudget uniform(long perQueueBytes, int slots) {
    return new QueueBudget(perQueueBytes * slots * BUDGETED.length, 1, slots);
  }

  /** Shares of one queue of this priority. */
  public int weight(Priority p) {
    return p == Priority.HIGH ? highWeight : 1;
  }

  /** The byte limit ({@code x-max-length-bytes}) of one slot queue of this priority. */
  public long bytes(Priority p) {
    long shares = 0;
    for (Priority q : BUDGETED) shares += weight(q);
    return totalBytes / (shares * slots) * weight(p);
  }

  long minimumTotal() {
    long shares = 0;
    for (Priority q : BUDGETED) shares += weight(q);
    return MIN_QUEUE_BYTES * shares * slots;
  }
}
