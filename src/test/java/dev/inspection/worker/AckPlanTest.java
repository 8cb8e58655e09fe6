package dev.inspection.worker;

import static dev.inspection.worker.AckPlan.Outcome.ACK;
import static dev.inspection.worker.AckPlan.Outcome.LEAVE;
import static dev.inspection.worker.AckPlan.Outcome.REQUEUE;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.inspection.worker.AckPlan.Settle;
import dev.inspection.worker.AckPlan.Step;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class AckPlanTest {
  private static Settle<String> s(String ch, long tag, AckPlan.Outcome o) {
    return new Settle<>(ch, tag, o);
  }

  @Test
  void aMultipleAckCoversItsChannelsAcksUpToItsTagAndNothingElse() {
    List<Settle<String>> in = List.of(s("c", 5, ACK), s("c", 2, ACK), s("d", 3, ACK), s("c", 4, REQUEUE), s("c", 7, ACK), s("c", 9, LEAVE), s("c", 3, ACK));
    Step<String> multiple = AckPlan.plan(in).stream().filter(st -> st.channel().equals("c") && st.multiple()).findFirst().orElseThrow();
    assertEquals(7, multiple.tag());
    assertEquals(List.of(2L, 3L, 5L, 7L), java.util.Arrays.stream(AckPlan.covered(in, multiple)).boxed().toList());
  }

  @Test
  void aWholeBatchOnOneChannelIsOneMultipleAck() {
    List<Settle<String>> in = new ArrayList<>();
    for (long t = 1; t <= 200; t++) in.add(s("high", t, ACK));
    assertEquals(List.of(new Step<>("high", 200, true, false)), AckPlan.plan(in));
  }

  @Test
  void oneCallPerChannelWhateverTheOrderTheyArriveIn() {
    List<Settle<String>> in = List.of(s("normal", 7, ACK), s("high", 3, ACK), s("normal", 5, ACK), s("high", 4, ACK), s("low", 9, ACK));
    assertEquals(List.of(new Step<>("normal", 7, true, false), new Step<>("high", 4, true, false), new Step<>("low", 9, false, false)),
        AckPlan.plan(in));
  }

  @Test
  void aRequeueIsNackedFirstSoTheMultipleAckCannotSettleIt() {
    List<Settle<String>> in = List.of(s("c", 1, ACK), s("c", 2, REQUEUE), s("c", 3, ACK));
    assertEquals(List.of(new Step<>("c", 2, false, true), new Step<>("c", 3, true, false)), AckPlan.plan(in));
  }

  @Test
  void noMultipleAckReachesOverADeliveryLeftOutstanding() {
    // a partly fenced group: 3 and 5 stay outstanding (their channel closes), the acks above them go one by one
    List<Settle<String>> in = List.of(s("c", 1, ACK), s("c", 2, ACK), s("c", 3, LEAVE), s("c", 4, ACK), s("c", 5, LEAVE), s("c", 6, ACK));
    assertEquals(List.of(new Step<>("c", 2, true, false), new Step<>("c", 4, false, false), new Step<>("c", 6, false, false)),
        AckPlan.plan(in));
  }

  @Test
  void everythingLeftMeansNoCall() {
    assertEquals(List.of(), AckPlan.plan(List.of(s("c", 1, LEAVE), s("c", 2, LEAVE))));
    assertEquals(List.of(), AckPlan.plan(List.<Settle<String>>of()));
  }

  @Test
  void aLoneAckIsNotMultiple() {
    assertEquals(List.of(new Step<>("c", 9, false, false)), AckPlan.plan(List.of(s("c", 9, ACK), s("c", 11, LEAVE))));
  }

  @Test
  void aDeliveryWaitsForItsSlowestPart() {
    assertEquals(LEAVE, AckPlan.Outcome.worse(ACK, LEAVE));
    assertEquals(REQUEUE, AckPlan.Outcome.worse(REQUEUE, ACK));
    assertEquals(LEAVE, AckPlan.Outcome.worse(LEAVE, REQUEUE));
    assertEquals(ACK, AckPlan.Outcome.worse(ACK, ACK));
  }
}
