package dev.inspection.messaging;

import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * Names and arguments of every exchange and queue. Declared again on every (re)connect; declaring is
 * idempotent as long as the arguments are unchanged.
 *
 * <p>Slot queues are quorum queues with single-active-consumer, a byte limit with {@code reject-publish}
 * (DESIGN.md D3: on RabbitMQ 3.10 {@code reject-publish-dlx} silently drops the head), a delivery limit
 * and at-least-once dead-lettering to {@code {prefix}.dlx}.
 */
public final class Topology {
  private final String prefix;
  private final int totalSlots;
  private final long maxBytes;
  private final int deliveryLimit;

  public Topology(String prefix, int totalSlots, long maxBytes, int deliveryLimit) {
    this.prefix = prefix;
    this.totalSlots = totalSlots;
    this.maxBytes = maxBytes;
    this.deliveryLimit = deliveryLimit;
  }

  /** The topology a configuration describes (prefix, slot count, per-queue byte and delivery limits). */
  public static Topology of(Config c) {
    return new Topology(c.get(Keys.TOPOLOGY_PREFIX), c.getInt(Keys.SLOTS_TOTAL), c.getLong(Keys.QUEUE_MAX_BYTES), c.getInt(Keys.QUEUE_DELIVERY_LIMIT));
  }

  public int totalSlots() {
    return totalSlots;
  }

  public String exchange() {
    return prefix + ".status";
  }

  public String deadLetterExchange() {
    return prefix + ".dlx";
  }

  public String deadLetterQueue() {
    return prefix + ".dead";
  }

  /**
   * The back-fill buffer of the DB-degraded write mode: history rows a worker wrote no history for, published with
   * confirms before their deliveries are acked, drained into history and rollups after recovery. A quorum queue
   * (replicated, on disk) with the same delivery limit and dead-lettering as the slot queues; no byte limit, since
   * refusing a spill would stall every degraded commit.
   */
  public String backfillQueue() {
    return prefix + ".backfill";
  }

  public String routingKey(int slot, Priority p) {
    return "slot." + slot + "." + p.wire;
  }

  public String queue(int slot, Priority p) {
    return String.format("%s.status.s%03d.%s", prefix, slot, p.wire);
  }

  public Map<String, Object> queueArguments() {
    Map<String, Object> args = new HashMap<>();
    args.put("x-queue-type", "quorum");
    args.put("x-single-active-consumer", true);
    args.put("x-max-length-bytes", maxBytes);
    args.put("x-overflow", "reject-publish");
    args.put("x-delivery-limit", deliveryLimit);
    args.put("x-dead-letter-exchange", deadLetterExchange());
    args.put("x-dead-letter-strategy", "at-least-once");
    return args;
  }

  /** Declares everything; blocking (call off the event loop). */
  public void declare(Channel ch) throws IOException {
    ch.exchangeDeclare(exchange(), BuiltinExchangeType.DIRECT, true);
    ch.exchangeDeclare(deadLetterExchange(), BuiltinExchangeType.FANOUT, true);
    Map<String, Object> dlqArgs = new HashMap<>();
    dlqArgs.put("x-queue-type", "quorum");
    ch.queueDeclare(deadLetterQueue(), true, false, false, dlqArgs);
    ch.queueBind(deadLetterQueue(), deadLetterExchange(), "");
    Map<String, Object> spillArgs = new HashMap<>();
    spillArgs.put("x-queue-type", "quorum");
    spillArgs.put("x-delivery-limit", deliveryLimit);
    spillArgs.put("x-dead-letter-exchange", deadLetterExchange());
    ch.queueDeclare(backfillQueue(), true, false, false, spillArgs);
    Map<String, Object> args = queueArguments();
    for (int s = 0; s < totalSlots; s++) {
      for (Priority p : Priority.values()) {
        ch.queueDeclare(queue(s, p), true, false, false, args);
        ch.queueBind(queue(s, p), exchange(), routingKey(s, p));
      }
    }
  }

  /** Deletes everything (tests and tear-down of a demo). */
  public void delete(Channel ch) throws IOException {
    for (int s = 0; s < totalSlots; s++) {
      for (Priority p : Priority.values()) ch.queueDelete(queue(s, p));
    }
    ch.queueDelete(deadLetterQueue());
    ch.queueDelete(backfillQueue());
    ch.exchangeDelete(exchange());
    ch.exchangeDelete(deadLetterExchange());
  }
}
