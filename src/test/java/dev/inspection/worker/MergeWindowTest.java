package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.ManualClock;
import dev.inspection.messaging.Priority;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MergeWindowTest {
  private final ManualClock clock = new ManualClock(1_000_000);

  private static byte[] body(String json) {
    return json.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void theWindowOpensWithItsFirstDeliveryAndClosesAfterTheWindowWhateverArrivesMeanwhile() {
    MergeWindow<String> w = new MergeWindow<>(100, clock);
    assertEquals(-1, w.dueInMs(false));
    w.hold(Priority.NORMAL, "a", clock.millis(), 500);
    clock.advance(300);
    w.hold(Priority.NORMAL, "b", clock.millis(), 500);
    assertEquals(200, w.dueInMs(false), "the window does not move with later deliveries");
    clock.advance(200);
    assertEquals(0, w.dueInMs(false));
    assertEquals(List.of("a", "b"), w.take().stream().map(MergeWindow.Held::delivery).toList());
    assertEquals(-1, w.dueInMs(false));
    w.hold(Priority.NORMAL, "c", clock.millis(), 500);
    assertEquals(500, w.dueInMs(false), "the next delivery opens a new window");
  }

  @Test
  void theShortestWindowHeldDecidesAndAFullWindowOrAFlushClosesAtOnce() {
    MergeWindow<String> w = new MergeWindow<>(3, clock);
    w.hold(Priority.HIGH, "a", clock.millis(), 500);
    clock.advance(10);
    w.hold(Priority.HIGH, "b", clock.millis(), 100);
    assertEquals(100, w.dueInMs(false));
    assertEquals(0, w.dueInMs(true), "a close flushes what is held");
    w.hold(Priority.HIGH, "c", clock.millis(), 500);
    assertEquals(0, w.dueInMs(false), "full: a batch is never larger than max");
    w.hold(Priority.HIGH, "d", clock.millis(), 500);
    assertEquals(3, w.take().size());
    assertEquals(1, w.size(), "what is over max waits for the next batch");
    w.clear();
    assertEquals(-1, w.dueInMs(true));
  }

  /**
   * The window takes deliveries out of arrival order: a later delivery of the same channel may be batched and acked
   * while an older one is held. The batch's settlement passes the held ones as left outstanding, so its multiple ack
   * stops below them (it would otherwise ack a held delivery before its commit, and the held one's own ack later would
   * close the channel with "unknown delivery tag").
   */
  @Test
  void aBatchSettledWhileOlderDeliveriesAreHeldNeverAcksOverThem() {
    BatchPicker<Long> picker = new BatchPicker<Long>(10, 0, clock).holding(tag -> tag % 2 == 0 ? 500 : 0);
    for (long tag = 1; tag <= 5; tag++) picker.add(Priority.NORMAL, tag, clock.millis());
    assertEquals(List.of(2L, 4L), picker.held());
    List<Long> batch = picker.take();
    assertEquals(List.of(1L, 3L, 5L), batch);
    List<AckPlan.Settle<String>> settles = new ArrayList<>();
    for (long t : batch) settles.add(new AckPlan.Settle<>("c", t, AckPlan.Outcome.ACK));
    for (long t : picker.held()) settles.add(new AckPlan.Settle<>("c", t, AckPlan.Outcome.LEAVE));
    assertEquals(List.of(new AckPlan.Step<>("c", 1, false, false), new AckPlan.Step<>("c", 3, false, false), new AckPlan.Step<>("c", 5, false, false)),
        AckPlan.plan(settles), "single acks: no multiple ack reaches over 2 or 4");
  }

  @Test
  void aHeldDeliveryNeedsAWindow() {
    MergeWindow<String> w = new MergeWindow<>(3, clock);
    assertThrows(IllegalArgumentException.class, () -> w.hold(Priority.LOW, "a", 0, 0));
    assertThrows(IllegalArgumentException.class, () -> new MergeWindow<String>(0, clock));
  }

  @Test
  void lanesDoNotWaitForTheWindowAndTheWindowGoesAsABatchOfItsOwn() {
    BatchPicker<String> picker = new BatchPicker<String>(8, 200, clock).holding(d -> d.startsWith("hotel") ? 500 : 0);
    picker.add(Priority.NORMAL, "hotel-1");
    assertEquals(200, picker.dueInMs(false), "while the window is open the caller looks again every linger");
    clock.advance(100);
    picker.add(Priority.NORMAL, "router-1");
    picker.add(Priority.HIGH, "hotel-2");
    assertEquals(200, picker.dueInMs(false), "the router lingers as without a window");
    clock.advance(200);
    assertEquals(0, picker.dueInMs(false));
    assertEquals(List.of("router-1"), picker.take(), "the lanes' batch leaves the held frames");
    assertEquals(2, picker.size());
    assertEquals(200, picker.dueInMs(false), "the window closes 500 ms after its first frame");
    clock.advance(199);
    assertEquals(1, picker.dueInMs(false));
    clock.advance(1);
    assertEquals(0, picker.dueInMs(false));
    BatchPicker.Take<String> window = picker.pick();
    assertEquals(List.of("hotel-2", "hotel-1"), window.batch(), "one batch, high first");
    assertEquals(Map.of(Priority.HIGH, 1, Priority.NORMAL, 1),
        Map.of(Priority.HIGH, window.lanes().get(Priority.HIGH).taken(), Priority.NORMAL, window.lanes().get(Priority.NORMAL).taken()));
    assertTrue(picker.isEmpty());
    assertEquals(-1, picker.dueInMs(true));
  }

  @Test
  void aFlushTakesTheLanesAndThenTheWindowAndAClearForgetsBoth() {
    BatchPicker<String> picker = new BatchPicker<String>(8, 200, clock).holding(d -> d.startsWith("hotel") ? 500 : 0);
    picker.add(Priority.NORMAL, "hotel-1");
    picker.add(Priority.NORMAL, "router-1");
    assertEquals(0, picker.dueInMs(true));
    assertEquals(List.of("router-1"), picker.take());
    assertEquals(0, picker.dueInMs(true));
    assertEquals(List.of("hotel-1"), picker.take());
    picker.add(Priority.NORMAL, "hotel-2");
    picker.add(Priority.NORMAL, "router-2");
    picker.clear();
    assertTrue(picker.isEmpty());
    assertEquals(-1, picker.dueInMs(true));
  }

  @Test
  void windowsAreReadPerProfileFromConfigurationAndFromTheFramesTheyName() {
    MergeWindows w = MergeWindows.parse("hotel_room=500, default=0");
    assertEquals(Map.of("hotel_room", 500L, "default", 0L), w.byProfile());
    assertEquals(500, w.windowMs(body("{\"v\":3,\"results\":[{\"payload\":{\"payload_profile\":\"hotel_room\",\"ts_ms\":1}}]}")));
    assertEquals(0, w.windowMs(body("{\"payload\":{\"status\":\"UP\"}}")), "a polled result has no window");
    assertEquals(0, w.windowMs(body("{\"payload\":{\"payload_profile\":\"default\"}}")), "a window of 0 is none");
    assertEquals(0, MergeWindows.parse("").windowMs(body("{\"payload_profile\":\"hotel_room\"}")));
  }

  @Test
  void aBadWindowSpecIsRefusedNamingWhatIsWrong() {
    assertMessage("unknown payload profile 'hotel'", "hotel=500");
    assertMessage("'hotel_room' is not profile=ms", "hotel_room");
    assertMessage("the window of hotel_room must be a whole number of ms, got 'soon'", "hotel_room=soon");
    assertMessage("the window of hotel_room must be 0..10000 ms, got -1", "hotel_room=-1");
    assertMessage("profile hotel_room is named twice", "hotel_room=1,hotel_room=2");
  }

  private static void assertMessage(String expected, String spec) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MergeWindows.parse(spec));
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }
}
