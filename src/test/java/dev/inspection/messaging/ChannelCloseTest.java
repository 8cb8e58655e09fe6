package dev.inspection.messaging;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.rabbitmq.client.ShutdownSignalException;
import org.junit.jupiter.api.Test;

class ChannelCloseTest {
  @Test
  void onlyABrokerCloseOfTheChannelAloneIsTheChannelOwnersToActOn() {
    assertTrue(ChannelClose.byBrokerAlone(new ShutdownSignalException(false, false, null, null)), "the broker closed the channel");
    assertFalse(ChannelClose.byBrokerAlone(new ShutdownSignalException(true, false, null, null)), "the connection's loss");
    assertFalse(ChannelClose.byBrokerAlone(new ShutdownSignalException(false, true, null, null)), "our own close");
    assertFalse(ChannelClose.byBrokerAlone(new ShutdownSignalException(true, true, null, null)), "our own close of the connection");
  }
}
