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
 *
 * <p>Each slot has three lanes (issue 12): {@code high} and {@code normal} keep the arguments they always had
 * (a redeclare with other arguments would fail with PRECONDITION_FAILED), and {@code low} is a queue of its
 * own (a classic queue) with a much smaller byte and length limit, so under overload the broker refuses low
 * first and the probe keeps those rows ({@link #queueArguments(Priority)}).
 */
public final class Topology {
  private final String prefix;
  private final int totalSlots;
  private final long maxBytes;
  private final int deliveryLimit;
  private final long lowMaxBytes;
  private final int lowMaxLength;

  /** Limits of the low lane when none are given: {@code queue.low.max.bytes} (but never above maxBytes) and {@code queue.low.max.length}. */
  public Topology(String prefix, int totalSlots, long maxBytes, int deliveryLimit) {
    this(prefix, totalSlots, maxBytes, deliveryLimit, Math.min(maxBytes, Long.parseLong(Keys.QUEUE_LOW_MAX_BYTES.defaultValue())),
        Integer.parseInt(Keys.QUEUE_LOW_MAX_LENGTH.defaultValue()));
  }

  public Topology(String prefix, int totalSlots, long maxBytes, int deliveryLimit, long lowMaxBytes, int lowMaxLength) {
    this.prefix = prefix;
    this.totalSlots = totalSlots;
    this.maxBytes = maxBytes;
    this.deliveryLimit = deliveryLimit;
    this.lowMaxBytes = lowMaxBytes;
    this.lowMaxLength = lowMaxLength;
  }

  /** The topology a configuration describes (prefix, slot count, per-queue byte and delivery limits, the low lane's limits). */
  public static Topology of(Config c) {
    return new Topology(c.get(Keys.TOPOLOGY_PREFIX), c.getInt(Keys.SLOTS_TOTAL), c.getLong(Keys.QUEUE_MAX_BYTES), c.getInt(Keys.QUEUE_DELIVERY_LIMIT),
        c.getLong(Keys.QUEUE_LOW_MAX_BYTES), c.getInt(Keys.QUEUE_LOW_MAX_LENGTH));
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

  public String routingKey(int slot, Priority p) {
    return "slot." + slot + "." + p.wire;
  }

  public String queue(int slot, Priority p) {
    return String.format("%s.status.s%03d.%s", prefix, slot, p.wire);
  }

  /** The arguments of the high and normal queues (unchanged since the two-lane topology). */
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

  /**
   * The arguments of one lane's queue. High and normal: {@link #queueArguments()}. Low: a durable
   * <em>classic</em> queue (single-active-consumer, persistent messages, confirms) with a much smaller byte
   * limit and a length limit, both {@code reject-publish}, so the broker refuses low first and the probe sees
   * it. Classic, because 256 more idle quorum queues cost the broker about 0.018 cores and 256 classic ones
   * nothing measurable (README, "Priority lanes"); what low gives up is {@code x-delivery-limit} (quorum
   * only): a low message is never dead-lettered by the broker for its delivery count, only by the worker.
   */
  public Map<String, Object> queueArguments(Priority p) {
    if (p != Priority.LOW) return queueArguments();
    Map<String, Object> args = new HashMap<>();
    args.put("x-queue-type", "classic");
    args.put("x-single-active-consumer", true);
    args.put("x-max-length-bytes", lowMaxBytes);
    args.put("x-max-length", lowMaxLength);
    args.put("x-overflow", "reject-publish");
    args.put("x-dead-letter-exchange", deadLetterExchange());
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
    for (int s = 0; s < totalSlots; s++) {
      for (Priority p : Priority.values()) {
        ch.queueDeclare(queue(s, p), true, false, false, queueArguments(p));
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
    ch.exchangeDelete(exchange());
    ch.exchangeDelete(deadLetterExchange());
  }
}
