package dev.inspection.messaging;

/** Why a message can never be processed; it goes to the dead-letter queue with this reason. */
public class InvalidMessage extends Exception {
  /** Short, stable reason used as a metric tag and as the {@code x-dead-reason} header. */
  public final String reason;

  public InvalidMessage(String reason, String detail) {
    super(detail);
    this.reason = reason;
  }
}
