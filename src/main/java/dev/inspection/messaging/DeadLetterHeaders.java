package dev.inspection.messaging;

import com.rabbitmq.client.AMQP;
import java.util.HashMap;
import java.util.Map;

/**
 * The properties of a message set aside on the dead-letter exchange by the platform (not by the broker): why, where
 * it came from, by whom and when, as headers the scheduler's dead-letter desk reads back. One place for the worker
 * (a result it cannot process) and the leader (what was left in a retired slot's queue after a shrink).
 */
public final class DeadLetterHeaders {
  private DeadLetterHeaders() {}

  /** Persistent, with {@code x-dead-reason}, {@code x-dead-detail}, the original routing key and queue, {@code x-dead-by} and {@code x-dead-at}. */
  public static AMQP.BasicProperties of(String reason, String detail, String routingKey, String queue, String by, long atMs) {
    Map<String, Object> headers = new HashMap<>();
    headers.put("x-dead-reason", reason);
    // a detail may quote the bad input; PostgreSQL, where the scheduler keeps it, cannot store a NUL (D9)
    headers.put("x-dead-detail", detail == null ? null : detail.replace("\u0000", "\\u0000"));
    headers.put("x-original-routing-key", routingKey);
    headers.put("x-original-queue", queue);
    headers.put("x-dead-by", by);
    headers.put("x-dead-at", atMs);
    return new AMQP.BasicProperties.Builder().deliveryMode(2).headers(headers).build();
  }
}
