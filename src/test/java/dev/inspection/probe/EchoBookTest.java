package dev.inspection.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class EchoBookTest {
  private static final long MS = 1_000_000;
  private static final byte[] HOST = {10, 0, 0, 1};
  private static final byte[] OTHER = {10, 0, 0, 2};
  private final List<JsonObject> done = new ArrayList<>();

  private EchoSeries series(int count, long timeoutMs) {
    return new EchoSeries(HOST, count, 100 * MS, timeoutMs * MS, s -> done.add(s.payload()));
  }

  private static IcmpPacket.Reply reply(long magic, int ticket) {
    return new IcmpPacket.Reply(ticket >>> 16, ticket & 0xffff, magic, ticket);
  }

  @Test
  void aReplyMatchesItsEchoByTicketAndTheCheckEndsWhenEveryEchoIsAnswered() {
    EchoBook book = new EchoBook(7L, false, 0x10000);
    EchoSeries s = series(2, 1000);
    int t1 = book.ticket();
    book.sent(t1, s, 0);
    int t2 = book.ticket();
    assertNotEquals(t1, t2);
    book.sent(t2, s, 100 * MS);
    assertTrue(book.replied(reply(7L, t2), HOST, 102 * MS));
    assertTrue(done.isEmpty(), "one echo still out");
    assertTrue(book.replied(reply(7L, t1), HOST, 4 * MS));
    assertEquals(1, done.size());
    JsonObject p = done.get(0);
    assertEquals("UP", p.getString("status"));
    assertEquals(3.0, p.getDouble("latency_ms"), "the average of 4 ms and 2 ms");
    assertEquals(2.0, p.getDouble("latency_min_ms"));
    assertEquals(4.0, p.getDouble("latency_max_ms"));
    assertEquals(0.0, p.getDouble("loss_pct"));
    assertEquals(2, p.getInteger("sent"));
    assertEquals(2, p.getInteger("received"));
    assertEquals(0, book.pending());
  }

  @Test
  void repliesThatAreNotOursAreIgnored() {
    EchoBook book = new EchoBook(7L, false, 0x20003);
    EchoSeries s = series(1, 1000);
    int t = book.ticket();
    book.sent(t, s, 0);
    assertFalse(book.replied(reply(8L, t), HOST, MS), "another engine's magic");
    assertFalse(book.replied(reply(7L, t + 1), HOST, MS), "a ticket not pending");
    assertFalse(book.replied(new IcmpPacket.Reply(99, t & 0xffff, 7L, t), HOST, MS), "identifier disagrees on a raw socket");
    assertFalse(book.replied(new IcmpPacket.Reply(t >>> 16, 1, 7L, t), HOST, MS), "sequence disagrees");
    assertFalse(book.replied(reply(7L, t), OTHER, MS), "from another address");
    assertEquals(1, book.pending());
    assertTrue(book.replied(reply(7L, t), HOST, MS));
    assertFalse(book.replied(reply(7L, t), HOST, 2 * MS), "a duplicate");
    assertEquals(1, done.size());
  }

  @Test
  void onADatagramSocketTheKernelsIdentifierIsAccepted() {
    EchoBook book = new EchoBook(7L, true, 0x30004);
    EchoSeries s = series(1, 1000);
    int t = book.ticket();
    book.sent(t, s, 0);
    assertTrue(book.replied(new IcmpPacket.Reply(4711, t & 0xffff, 7L, t), HOST, MS));
  }

  @Test
  void anEchoUnansweredAtItsDeadlineIsLostAndALateReplyDoesNotCount() {
    EchoBook book = new EchoBook(7L, false, 1);
    EchoSeries s = series(3, 500);
    int[] t = new int[3];
    for (int i = 0; i < 3; i++) {
      t[i] = book.ticket();
      book.sent(t[i], s, i * 100 * MS);
    }
    assertEquals(500 * MS, book.nextDeadline());
    assertTrue(book.replied(reply(7L, t[1]), HOST, 101 * MS));
    assertEquals(0, book.expire(499 * MS));
    assertEquals(1, book.expire(500 * MS));
    assertEquals(700 * MS, book.nextDeadline(), "the answered echo's deadline is skipped");
    assertEquals(1, book.expire(800 * MS));
    assertFalse(book.replied(reply(7L, t[2]), HOST, 801 * MS), "too late");
    assertEquals(1, done.size());
    JsonObject p = done.get(0);
    assertEquals("UP", p.getString("status"), "one reply of three is enough");
    assertEquals(66.7, p.getDouble("loss_pct"));
    assertEquals(1, p.getInteger("received"));
    assertEquals(Long.MAX_VALUE, book.nextDeadline());
  }

  @Test
  void aCheckWithNoReplyIsDownWithFullLossAndNoLatency() {
    EchoBook book = new EchoBook(7L, false, 1);
    EchoSeries s = series(2, 300);
    book.sent(book.ticket(), s, 0);
    book.sent(book.ticket(), s, 100 * MS);
    book.expire(10_000 * MS);
    JsonObject p = done.get(0);
    assertEquals("DOWN", p.getString("status"));
    assertEquals(100.0, p.getDouble("loss_pct"));
    assertNull(p.getValue("latency_ms"));
    assertTrue(p.getString("error").contains("no echo reply within 300 ms"), p.encode());
  }

  @Test
  void aFailedSendCountsAsLostWithItsReason() {
    EchoSeries s = series(1, 300);
    s.sendFailed(0, "sendto: Network is unreachable (errno 101)");
    assertEquals("DOWN", done.get(0).getString("status"));
    assertTrue(done.get(0).getString("error").contains("Network is unreachable"));
  }

  @Test
  void closingEndsEveryCheckOnce() {
    EchoBook book = new EchoBook(7L, false, 1);
    EchoSeries s = series(3, 300);
    book.sent(book.ticket(), s, 0);
    book.sent(book.ticket(), s, 0);
    book.abandonAll("the probe is stopping");
    s.abort("again");
    assertEquals(1, done.size());
    assertEquals(3, done.get(0).getInteger("sent"));
    assertEquals("the probe is stopping", done.get(0).getString("error"));
  }

  @Test
  void theRefusalNamesTheSysctlAndTheCapability() {
    String why = IcmpEngine.noSocket("Permission denied (errno 13)", "Operation not permitted (errno 1)");
    assertTrue(why.contains("net.ipv4.ping_group_range"), why);
    assertTrue(why.contains("CAP_NET_RAW"), why);
    IcmpEngine refused = IcmpEngine.refused(why);
    assertEquals(why, refused.unavailable());
    List<JsonObject> got = new ArrayList<>();
    refused.ping(HOST, 3, 100, 1000, got::add);
    assertEquals("DOWN", got.get(0).getString("status"));
    assertEquals(why, got.get(0).getString("error"));
  }
}
