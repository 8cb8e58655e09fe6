package dev.inspection.outbox;

/** A durable outbox row: what is published, under which routing key, with which message id. */
public record OutboxRow(long id, String messageId, String routingKey, byte[] body, long createdAtMs) {
}
