package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ChannelTagsTest {
  private static ChannelTags delivered(long... tags) {
    ChannelTags t = new ChannelTags();
    for (long tag : tags) t.delivered(tag);
    return t;
  }

  private static void assertContains(String text, String... parts) {
    for (String p : parts) assertTrue(text != null && text.contains(p), () -> "expected '" + p + "' in: " + text);
  }

  @Test
  void aHeldTagIsAckedOnceAndASecondAckIsNotSent() {
    ChannelTags t = delivered(1, 2, 3);
    assertEquals(new ChannelTags.Send(2, false, null), t.ack(2, false));
    ChannelTags.Send again = t.ack(2, false);
    assertEquals(-1, again.tag());
    assertContains(again.refused(), "ack of tag 2 not held", "delivered and settled before", "d1 d2 d3 a2");
    assertEquals(2, t.size());
  }

  @Test
  void aMultipleAckSettlesEveryHeldTagUpToItself() {
    ChannelTags t = delivered(1, 2, 3, 4, 5);
    assertEquals(2, t.requeue(2).tag());
    assertEquals(new ChannelTags.Send(4, true, null), t.ack(4, true));
    assertEquals(1, t.size());
    assertContains(t.ack(3, false).refused(), "not held");
    assertNull(t.ack(5, false).refused());
    assertEquals(0, t.size());
  }

  @Test
  void aMultipleAckWhoseOwnTagIsGoneStillSettlesWhatItCoversThatIsHeld() {
    ChannelTags t = delivered(1, 2, 3, 4);
    t.ack(4, false);
    ChannelTags.Send s = t.ack(4, true);
    assertEquals(3, s.tag());
    assertTrue(s.multiple());
    assertContains(s.refused(), "ack of tag 4 (multiple) not held");
    assertEquals(0, t.size());
    ChannelTags.Send nothing = t.ack(4, true);
    assertEquals(-1, nothing.tag());
    assertFalse(nothing.multiple());
  }

  @Test
  void aBatchsMultipleAckThatWouldReachOverAnotherBatchsTagsIsSentAsSingleAcks() {
    ChannelTags t = delivered(1, 2, 3, 4, 5, 6);
    // 3..6 committed; 1 and 2 belong to a batch not settled yet: one ack of 6 (multiple) would settle them uncommitted
    java.util.List<ChannelTags.Send> sends = t.ackBatch(new long[] {3, 4, 5, 6});
    assertContains(sends.get(0).refused(), "a multiple ack of tag 6 would also settle 2 tag(s) not in its batch (1 2)", "d1 d2 d3 d4 d5 d6");
    assertEquals(-1, sends.get(0).tag());
    assertEquals(java.util.List.of(new ChannelTags.Send(3, false, null), new ChannelTags.Send(4, false, null), new ChannelTags.Send(5, false, null),
        new ChannelTags.Send(6, false, null)), sends.subList(1, 5));
    assertEquals(2, t.size());
    // the earlier batch, settled afterwards, still finds its tags
    assertEquals(java.util.List.of(new ChannelTags.Send(2, true, null)), t.ackBatch(new long[] {1, 2}));
    assertEquals(0, t.size());
  }

  @Test
  void aBatchWithNothingElseBelowItIsOneMultipleAck() {
    ChannelTags t = delivered(1, 2, 3, 4, 5);
    t.requeue(2);
    assertEquals(java.util.List.of(new ChannelTags.Send(4, true, null)), t.ackBatch(new long[] {1, 3, 4}));
    assertEquals(1, t.size(), "5, above the batch, is still held");
  }

  @Test
  void aTagNeverDeliveredIsNamedSo() {
    ChannelTags t = delivered(1, 2);
    assertContains(t.ack(7, false).refused(), "never delivered (highest delivered 2)", "2 held (1..2)");
    assertContains(t.requeue(9).refused(), "requeue of tag 9 not held");
    assertEquals(2, t.size());
  }

  @Test
  void theHistoryKeepsTheLastEventsOnly() {
    ChannelTags t = new ChannelTags();
    for (long tag = 1; tag <= 40; tag++) {
      t.delivered(tag);
      t.ack(tag, false);
    }
    String why = t.ack(40, false).refused();
    assertContains(why, "d29 a29", "d40 a40");
    assertFalse(why.contains("d28 "), why);
  }
}
