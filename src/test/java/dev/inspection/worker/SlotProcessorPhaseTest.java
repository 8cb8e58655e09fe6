package dev.inspection.worker;

import static dev.inspection.worker.SlotProcessor.PHASES;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.control.IllegalStateTransition;
import dev.inspection.worker.SlotProcessor.Phase;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class SlotProcessorPhaseTest {

  @Test
  void aClosingProcessorCanOnlyStopSoAGracefulMoveIsNeverReopened() {
    assertEquals(List.of(Phase.STOPPED), PHASES.legalNext(Phase.CLOSING));
    assertThrows(IllegalStateTransition.class, () -> PHASES.check(Phase.CLOSING, Phase.OPENING));
  }

  @Test
  void aStoppedProcessorNeverMovesAgain() {
    assertTrue(PHASES.legalNext(Phase.STOPPED).isEmpty());
  }

  @Test
  void everyLivePhaseCanBeStoppedAtOnceWhenTheLeaseIsLost() {
    assertEquals(EnumSet.complementOf(EnumSet.of(Phase.STOPPED)), PHASES.allowedFrom(Phase.STOPPED));
  }

  @Test
  void afterADatabasePauseConsumersAreOpenedAgainOnlyThroughDisconnected() {
    assertFalse(PHASES.allowed(Phase.PAUSED_FOR_DATABASE, Phase.CONSUMING));
    assertFalse(PHASES.allowed(Phase.PAUSED_FOR_DATABASE, Phase.OPENING));
    assertTrue(PHASES.allowed(Phase.PAUSED_FOR_DATABASE, Phase.DISCONNECTED));
    assertEquals(EnumSet.of(Phase.OPENING), PHASES.allowedFrom(Phase.CONSUMING), "consuming only after a successful open");
  }
}
