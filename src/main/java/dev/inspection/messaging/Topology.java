package dev.inspection.messaging;

import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
  private static final Logger log = LoggerFactory.getLogger(Topology.class);
  private static final Priority[] PRIORITIES = Priority.values();
  private final String prefix;
  private final int totalSlots;
  private final QueueBudget budget;
  private final int deliveryLimit;
  private final long lowMaxBytes;
  private final int lowMaxLength;
  /** The low lane as a quorum queue (queue.low.type=quorum: replicated, for a broker cluster) instead of a classic one. */
  private final boolean lowQuorum;
  /**
   * {@link #routingKey} of every slot below totalSlots and every priority, built once: the probe names a key for every
   * result it appends, and the publisher and its gate look each up in maps, which hashed a new string every time.
   */
  private final String[] routingKeys;

  /** Every high and normal queue limited to {@code maxBytes}, the low lane to its default limits but never above maxBytes (tests). */
  public Topology(String prefix, int totalSlots, long maxBytes, int deliveryLimit) {
    this(prefix, totalSlots, QueueBudget.uniform(maxBytes, totalSlots), deliveryLimit,
        Math.min(maxBytes, Long.parseLong(Keys.QUEUE_LOW_MAX_BYTES.defaultValue())), Integer.parseInt(Keys.QUEUE_LOW_MAX_LENGTH.defaultValue()));
  }

  /** High and normal queues by {@code budget}, the low lane at its default limits (tests). */
  public Topology(String prefix, int totalSlots, QueueBudget budget, int deliveryLimit) {
    this(prefix, totalSlots, budget, deliveryLimit, Long.parseLong(Keys.QUEUE_LOW_MAX_BYTES.defaultValue()),
        Integer.parseInt(Keys.QUEUE_LOW_MAX_LENGTH.defaultValue()));
  }

  public Topology(String prefix, int totalSlots, QueueBudget budget, int deliveryLimit, long lowMaxBytes, int lowMaxLength) {
    this(prefix, totalSlots, budget, deliveryLimit, lowMaxBytes, lowMaxLength, false);
  }

  public Topology(String prefix, int totalSlots, QueueBudget budget, int deliveryLimit, long lowMaxBytes, int lowMaxLength, boolean lowQuorum) {
    this.lowQuorum = lowQuorum;
    this.prefix = prefix;
    this.totalSlots = totalSlots;
    this.budget = budget;
    this.deliveryLimit = deliveryLimit;
    this.lowMaxBytes = lowMaxBytes;
    this.lowMaxLength = lowMaxLength;
    this.routingKeys = new String[Math.max(0, totalSlots) * PRIORITIES.length];
    for (int slot = 0; slot < totalSlots; slot++) {
      for (Priority p : PRIORITIES) routingKeys[slot * PRIORITIES.length + p.ordinal()] = buildRoutingKey(slot, p);
    }
  }

  /** The topology a configuration describes (prefix, slot count, the high and normal queues' byte budget, delivery limit, the low lane's limits). */
  public static Topology of(Config c) {
    return new Topology(c.get(Keys.TOPOLOGY_PREFIX), c.getInt(Keys.SLOTS_TOTAL), QueueBudget.of(c), c.getInt(Keys.QUEUE_DELIVERY_LIMIT),
        c.getLong(Keys.QUEUE_LOW_MAX_BYTES), c.getInt(Keys.QUEUE_LOW_MAX_LENGTH), lowType(c).equals("quorum"));
  }

  /** queue.low.type, checked: classic or quorum, else a {@link ConfigException} naming the key. */
  public static String lowType(Config c) {
    String t = c.get(Keys.QUEUE_LOW_TYPE).trim();
    if (t.equals("classic") || t.equals("quorum")) return t;
    throw new ConfigException(Keys.QUEUE_LOW_TYPE.name() + " must be classic or quorum (got '" + t + "')");
  }

  public QueueBudget budget() {
    return budget;
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

  /** Probes' shed reports (issue 12): per device-minute counts of results shed at the outbox watermarks, read by the schedulers. */
  public String shedQueue() {
    return prefix + ".shed";
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
    int i = slot * PRIORITIES.length + p.ordinal();
    return slot >= 0 && i < routingKeys.length ? routingKeys[i] : buildRoutingKey(slot, p);
  }

  private static String buildRoutingKey(int slot, Priority p) {
    return "slot." + slot + "." + p.wire;
  }

  public String queue(int slot, Priority p) {
    // what String.format("%s.status.s%03d.%s") gives, without its parser: the queue sampler names 768 queues every 5 s
    String n = Integer.toString(slot);
    return prefix + ".status.s" + (n.length() >= 3 ? n : "000".substring(n.length()) + n) + "." + p.wire;
  }

  /** The arguments of the high and normal queues: quorum queues, each with its share of the budget. */
  private Map<String, Object> quorumArguments(Priority p) {
    Map<String, Object> args = new HashMap<>();
    args.put("x-queue-type", "quorum");
    args.put("x-single-active-consumer", true);
    args.put("x-max-length-bytes", budget.bytes(p));
    args.put("x-overflow", "reject-publish");
    args.put("x-delivery-limit", deliveryLimit);
    args.put("x-dead-letter-exchange", deadLetterExchange());
    args.put("x-dead-letter-strategy", "at-least-once");
    return args;
  }

  /**
   * The arguments of one lane's queue. High and normal: quorum queues with their share of the broker budget
   * ({@link QueueBudget}). Low: a durable
   * <em>classic</em> queue (single-active-consumer, persistent messages, confirms) with a much smaller byte
   * limit and a length limit, both {@code reject-publish}, so the broker refuses low first and the probe sees
   * it. Classic, because 256 more idle quorum queues cost the broker about 0.018 cores and 256 classic ones
   * nothing measurable (README, "Priority lanes"); what low gives up is {@code x-delivery-limit} (quorum
   * only): a low message is never dead-lettered by the broker for its delivery count, only by the worker.
   * With {@code queue.low.type=quorum} (a broker cluster) low is a quorum queue like the others, with low's limits.
   */
  public Map<String, Object> queueArguments(Priority p) {
    if (p != Priority.LOW) return quorumArguments(p);
    if (lowQuorum) {
      // a broker cluster: a classic queue lives on one node, and while that node is down declaring it fails (NOT_FOUND,
      // home node down), which fails every client's set-up on every other node too; a quorum queue is on all of them
      Map<String, Object> args = quorumArguments(p);
      args.put("x-max-length-bytes", lowMaxBytes);
      args.put("x-max-length", lowMaxLength);
      return args;
    }
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
    ch.queueDeclare(shedQueue(), true, false, false, dlqArgs);
    Map<String, Object> spillArgs = new HashMap<>();
    spillArgs.put("x-queue-type", "quorum");
    spillArgs.put("x-delivery-limit", deliveryLimit);
    spillArgs.put("x-dead-letter-exchange", deadLetterExchange());
    ch.queueDeclare(backfillQueue(), true, false, false, spillArgs);
    declareSlots(ch, 0, totalSlots);
  }

  /**
   * Declares and binds one slot's queues; blocking. A reshard's new slots (beyond {@code slots.total}) are declared
   * by the worker that opens them, before it consumes.
   */
  public void declareSlot(Channel ch, int slot) throws IOException {
    declareSlots(ch, slot, slot + 1);
  }

  /**
   * Slots {@code from} until {@code to}, on a channel of their own (the broker closes a channel that meets a queue
   * with other arguments, and the caller's stays usable), replaced after each such refusal and closed at the end.
   */
  private void declareSlots(Channel given, int from, int to) throws IOException {
    Channel[] ch = {given.getConnection().createChannel()};
    List<String> kept = new ArrayList<>();
    try {
      for (int s = from; s < to; s++) {
        for (Priority p : Priority.values()) {
          if (!declareSlotQueue(ch, s, p)) kept.add(queue(s, p));
          ch[0].queueBind(queue(s, p), exchange(), routingKey(s, p));
        }
      }
    } finally {
      try {
        if (ch[0].isOpen()) ch[0].close();
      } catch (TimeoutException | IOException e) {
        log.debug("closing the declaring channel: {}", e.toString());
      }
    }
    if (!kept.isEmpty()) {
      log.warn("{} slot queue(s) exist with another byte limit than this configuration gives them ({}, first: {}) and are kept as they are,"
          + " since RabbitMQ cannot change a queue's arguments: expected after a reshard (each slot keeps the share of {} it was declared"
          + " with) or a budget change. To apply the new limit, set a RabbitMQ policy with max-length-bytes, or drain and delete the queues",
          kept.size(), Keys.BROKER_QUEUE_BUDGET_BYTES.name() + "=" + budget.totalBytes() + " over " + totalSlots + " slots", kept.get(0),
          Keys.BROKER_QUEUE_BUDGET_BYTES.name());
    }
  }

  /**
   * RabbitMQ cannot change the arguments of an existing queue: a queue declared earlier with other arguments
   * refuses this declare with PRECONDITION_FAILED (and closes the channel; {@code ch[0]} is then replaced by a new
   * one); false when the queue was kept with its own byte limit. A byte limit alone that differs is expected after a reshard (a slot's queues keep the share of the budget
   * they were declared with, while {@code slots.total} now splits it over more slots) and after a budget change:
   * the queue is kept as it is, checked passively, with a warning that says how to apply the new limit. Any other
   * difference is said plainly, with what to do, rather than as the broker's channel error.
   */
  private boolean declareSlotQueue(Channel[] ch, int slot, Priority p) throws IOException {
    try {
      ch[0].queueDeclare(queue(slot, p), true, false, false, queueArguments(p));
      return true;
    } catch (IOException e) {
      String reason = String.valueOf(e.getCause() == null ? e.getMessage() : e.getCause().getMessage());
      if (!reason.contains("PRECONDITION_FAILED")) throw e;
      ch[0] = ch[0].getConnection().createChannel();
      if (reason.contains("'x-max-length-bytes'")) {
        ch[0].queueDeclarePassive(queue(slot, p));
        return false;
      }
      String limits = p == Priority.LOW
          ? "x-max-length=" + lowMaxLength + " from " + Keys.QUEUE_LOW_MAX_LENGTH.name()
          : "x-delivery-limit=" + deliveryLimit + " from " + Keys.QUEUE_DELIVERY_LIMIT.name();
      throw new IOException("queue " + queue(slot, p) + " already exists with other arguments than this configuration gives it"
          + " (" + limits + ", type and dead-lettering), and RabbitMQ cannot"
          + " change a queue's arguments. Either set those keys back to the values the queues were declared with, or stop the probes,"
          + " let the workers empty the queues and delete them (rabbitmqctl delete_queue NAME; a test or demo installation:"
          + " java -cp node.jar dev.inspection.node.Teardown --yes) so they are declared again with the new limits. Broker said: " + reason, e);
    }
  }

  /** Deletes everything (tests and tear-down of a demo). */
  public void delete(Channel ch) throws IOException {
    for (int s = 0; s < totalSlots; s++) {
      for (Priority p : Priority.values()) ch.queueDelete(queue(s, p));
    }
    ch.queueDelete(deadLetterQueue());
    ch.queueDelete(shedQueue());
    ch.queueDelete(backfillQueue());
    ch.exchangeDelete(exchange());
    ch.exchangeDelete(deadLetterExchange());
  }
}
