package dev.inspection.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import dev.inspection.config.Keys;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.QueueBudget;
import java.io.IOException;
import dev.inspection.messaging.Topology;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** What the platform relies on from RabbitMQ 3.10's quorum queues, checked against the real broker (DESIGN.md D3). */
class BrokerBehaviourIT {

  @Test
  void fullQuorumQueueWithRejectPublishNacksAndKeepsEveryAckedMessage() throws Exception {
    try (TestEnv env = new TestEnv(1); Channel ch = env.channel()) {
      Topology t = new Topology(env.name, 1, 20_000, 20);
      t.declare(ch);
      ch.confirmSelect();
      ConcurrentSkipListSet<Long> acked = new ConcurrentSkipListSet<>();
      AtomicInteger nacked = new AtomicInteger();
      Map<Long, Integer> tagToIndex = new ConcurrentHashMap<>();
      ch.addConfirmListener(new ConfirmListener() {
        public void handleAck(long tag, boolean multiple) {
          if (multiple) {
            for (long x : tagToIndex.keySet()) if (x <= tag && tagToIndex.remove(x) != null) acked.add(x);
          } else if (tagToIndex.remove(tag) != null) acked.add(tag);
        }

        public void handleNack(long tag, boolean multiple) {
          if (multiple) {
            for (long x : tagToIndex.keySet()) if (x <= tag && tagToIndex.remove(x) != null) nacked.incrementAndGet();
          } else if (tagToIndex.remove(tag) != null) nacked.incrementAndGet();
        }
      });
      byte[] body = new byte[400];
      for (int i = 0; i < 300; i++) {
        tagToIndex.put(ch.getNextPublishSeqNo(), i);
        ch.basicPublish(t.exchange(), t.routingKey(0, Priority.NORMAL), new AMQP.BasicProperties.Builder().deliveryMode(2).build(), body);
      }
      ch.waitForConfirms(10_000);
      long inQueue = env.ready(0, Priority.NORMAL);
      System.out.printf("300 publishes of 400 bytes to a 20000-byte quorum queue: %d acked, %d nacked, %d in the queue, %d dead-lettered%n",
          acked.size(), nacked.get(), inQueue, env.deadLetterCount());
      assertEquals(300, acked.size() + nacked.get());
      assertEquals(acked.size(), inQueue, "every acked publish is in the queue");
      assertEquals(0, env.deadLetterCount());
    }
  }

  @Test
  void budgetSplitsOverTheQueuesAChangedByteLimitKeepsTheQueuesAndAnyOtherChangeSaysWhatToDo() throws Exception {
    try (TestEnv env = new TestEnv(2)) {
      Topology first = new Topology(env.name, 2, new QueueBudget(50_000, 4, 2), 20);
      try (Channel ch = env.channel()) {
        first.declare(ch);
        // high gets 4 shares of 5 per slot: a 4,000-byte body fits the high queue (20,000) and overflows the normal one (5,000)
        ch.confirmSelect();
        byte[] body = new byte[4_000];
        for (int i = 0; i < 4; i++) {
          // one at a time: a quorum queue checks its limit per settled publish, and may overshoot by what is in flight
          ch.basicPublish(first.exchange(), first.routingKey(0, Priority.HIGH), new AMQP.BasicProperties(), body);
          ch.waitForConfirms(10_000);
          ch.basicPublish(first.exchange(), first.routingKey(0, Priority.NORMAL), new AMQP.BasicProperties(), body);
          ch.waitForConfirms(10_000);
        }
      }
      assertEquals(4, env.ready(0, Priority.HIGH));
      assertEquals(2, env.ready(0, Priority.NORMAL), "the normal queue's 5,000 bytes refuse the third 4,000-byte message");
      // a changed byte limit (a reshard's new slots.total splits the budget anew): the existing queues are kept as declared
      Topology changed = new Topology(env.name, 2, new QueueBudget(100_000, 4, 2), 20);
      try (Channel ch = env.channel()) {
        changed.declare(ch);
        ch.confirmSelect();
        ch.basicPublish(changed.exchange(), changed.routingKey(0, Priority.NORMAL), new AMQP.BasicProperties(), new byte[4_000]);
        ch.waitForConfirms(10_000);
      }
      assertEquals(2, env.ready(0, Priority.NORMAL), "the normal queue keeps its 5,000 bytes: the new 10,000 did not apply");
      // any other argument (the low lane's length limit) cannot be kept: the refusal says what to do
      Topology otherLimit = new Topology(env.name, 2, new QueueBudget(50_000, 4, 2), 20, Long.parseLong(Keys.QUEUE_LOW_MAX_BYTES.defaultValue()), 7);
      Channel ch = env.channel(); // the broker closes it with the refusal
      IOException e = assertThrows(IOException.class, () -> otherLimit.declare(ch));
      assertTrue(e.getMessage().contains("queue.low.max.length") && e.getMessage().contains("delete_queue"), e.getMessage());
    }
  }
}
