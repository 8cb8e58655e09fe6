package dev.inspection.probe;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * The echoes in flight, by ticket: hands out tickets, matches replies to them, and declares them lost at their
 * deadline. Pure and single-threaded (the engine's thread owns it); times are nanoseconds of one clock.
 *
 * <p>A reply matches when its magic is this engine's, its ticket is pending, its header agrees with the ticket
 * (identifier and sequence on a raw socket; the sequence only on a datagram socket, whose kernel sets the identifier)
 * and it comes from the address the echo went to. Anything else — another process's ping, a late reply of an echo
 * already declared lost, a duplicate — is ignored.
 */
final class EchoBook {
  private record Echo(int ticket, EchoSeries series, long sentAt, long deadline) {}

  private final long magic;
  private final boolean datagram;
  private final Map<Integer, Echo> pending = new HashMap<>();
  private final PriorityQueue<Echo> byDeadline = new PriorityQueue<>(Comparator.comparingLong(Echo::deadline));
  private int next;

  EchoBook(long magic, boolean datagram, int firstTicket) {
    this.magic = magic;
    this.datagram = datagram;
    this.next = firstTicket;
  }

  long magic() {
    return magic;
  }

  /** A ticket no pending echo holds. */
  int ticket() {
    while (pending.containsKey(next)) next++;
    return next++;
  }

  /** The echo of {@code ticket} left at {@code now}; it is lost unless answered by {@code now + series.timeoutNanos}. */
  void sent(int ticket, EchoSeries series, long now) {
    Echo e = new Echo(ticket, series, now, now + series.timeoutNanos);
    pending.put(ticket, e);
    byDeadline.add(e);
    series.sent(now);
  }

  /** Counts {@code reply} (from {@code from}, 4 bytes) for its echo; false when it is none of ours. */
  boolean replied(IcmpPacket.Reply reply, byte[] from, long now) {
    if (reply.magic() != magic) return false;
    Echo e = pending.get(reply.ticket());
    if (e == null) return false;
    if ((reply.sequence() != (e.ticket & 0xffff)) || (!datagram && reply.identifier() != e.ticket >>> 16)) return false;
    if (!Arrays.equals(from, e.series.address)) return false;
    pending.remove(e.ticket);
    e.series.replied(Math.max(0, now - e.sentAt));
    return true;
  }

  /** Declares lost every echo whose deadline is at or before {@code now}; returns how many. */
  int expire(long now) {
    int n = 0;
    while (!byDeadline.isEmpty() && byDeadline.peek().deadline <= now) {
      Echo e = byDeadline.poll();
      if (pending.remove(e.ticket, e)) {
        n++;
        e.series.lost(null);
      }
    }
    return n;
  }

  /** The earliest deadline of a pending echo, or {@code Long.MAX_VALUE}. */
  long nextDeadline() {
    while (!byDeadline.isEmpty() && pending.get(byDeadline.peek().ticket) != byDeadline.peek()) byDeadline.poll();
    return byDeadline.isEmpty() ? Long.MAX_VALUE : byDeadline.peek().deadline;
  }

  int pending() {
    return pending.size();
  }

  /** Declares every pending echo lost for {@code why} (the engine closes). */
  void abandonAll(String why) {
    List<Echo> all = new ArrayList<>(pending.values());
    pending.clear();
    byDeadline.clear();
    for (Echo e : all) e.series.abort(why);
  }
}
