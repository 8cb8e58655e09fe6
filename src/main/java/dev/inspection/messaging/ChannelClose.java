package dev.inspection.messaging;

import com.rabbitmq.client.ShutdownSignalException;

/** Why an AMQP channel closed, as this node's consumers and publishers read it. */
public final class ChannelClose {
  private ChannelClose() {}

  /**
   * The broker closed this channel alone while its connection stays up (an error on the channel, a consumer's queue
   * deleted): the channel's owner must act on it, as nothing else will. Not the connection's loss (a hard error: the
   * connector reconnects and every owner starts again) and not our own close.
   */
  public static boolean byBrokerAlone(ShutdownSignalException sig) {
    return !sig.isHardError() && !sig.isInitiatedByApplication();
  }
}
