package dev.inspection.worker;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.NavigableSet;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The delivery tags one channel holds unsettled, as the broker counts them: every delivery adds its tag, an ack or
 * a nack removes it (a multiple ack every tag up to it). The broker closes a channel that settles a tag it does not
 * hold ({@code PRECONDITION_FAILED - unknown delivery tag}), and with it goes every other unsettled delivery of the
 * channel (redelivered to whoever consumes next); so before a settle is sent it is checked here, and one that would
 * name a tag not held is not sent — reported instead, with the channel's recent history, so its cause can be found.
 * Pure and thread-safe: deliveries arrive on the client's dispatch thread, settles are sent from the ack thread.
 */
final class ChannelTags {
  /** What to send for a settle: {@code tag} (-1: nothing) and whether as a multiple ack; {@code refused}: what was asked is not held. */
  record Send(long tag, boolean multiple, String refused) {
    static final Send NOTHING = new Send(-1, false, null);
  }

  private static final int HISTORY = 24;
  private static final long DELIVERED = 0;
  private static final long ACKED = 1;
  private static final long ACKED_MULTIPLE = 2;
  private static final long REQUEUED = 3;

  private final NavigableSet<Long> held = new TreeSet<>();
  private final long[] recent = new long[HISTORY];
  private int events;
  private long highestDelivered;

  synchronized void delivered(long tag) {
    held.add(tag);
    highestDelivered = Math.max(highestDelivered, tag);
    note(DELIVERED, tag);
  }

  /** An ack of {@code tag}, multiple or not. A multiple ack whose own tag is not held still settles what it covers that is. */
  synchronized Send ack(long tag, boolean multiple) {
    if (held.remove(tag)) {
      if (multiple) held.headSet(tag, false).clear();
      note(multiple ? ACKED_MULTIPLE : ACKED, tag);
      return new Send(tag, multiple, null);
    }
    String why = "ack of tag " + tag + (multiple ? " (multiple)" : "") + " not held: " + describe(tag);
    if (!multiple) return new Send(-1, false, why);
    Long below = held.floor(tag);
    if (below == null) return new Send(-1, false, why);
    held.headSet(below, true).clear();
    note(ACKED_MULTIPLE, below);
    return new Send(below, true, why);
  }

  /**
   * A multiple ack meant to settle {@code mine} (ascending; its own tag last). When the channel holds a tag below it
   * that is not in {@code mine} — a delivery of another batch, not committed by this one — one multiple ack would settle
   * that too (an ack before its commit): each of {@code mine} is acked on its own instead, and that is reported.
   */
  synchronized List<Send> ackBatch(long[] mine) {
    long top = mine[mine.length - 1];
    List<Long> strangers = new ArrayList<>();
    for (long t : held.headSet(top, true)) if (Arrays.binarySearch(mine, t) < 0) strangers.add(t);
    if (strangers.isEmpty()) return List.of(ack(top, true));
    List<Send> out = new ArrayList<>();
    out.add(new Send(-1, false, "a multiple ack of tag " + top + " would also settle " + strangers.size() + " tag(s) not in its batch ("
        + strangers.stream().limit(8).map(String::valueOf).collect(Collectors.joining(" ")) + (strangers.size() > 8 ? " ..." : "")
        + "), acked one by one instead: " + describe(top)));
    for (long t : mine) out.add(ack(t, false));
    return out;
  }

  /** A nack that returns {@code tag} to the queue. */
  synchronized Send requeue(long tag) {
    if (!held.remove(tag)) return new Send(-1, false, "requeue of tag " + tag + " not held: " + describe(tag));
    note(REQUEUED, tag);
    return new Send(tag, false, null);
  }

  synchronized int size() {
    return held.size();
  }

  private void note(long kind, long tag) {
    recent[events++ % HISTORY] = tag << 2 | kind;
  }

  private String describe(long tag) {
    String what = tag > highestDelivered ? "never delivered (highest delivered " + highestDelivered + ")" : "delivered and settled before";
    List<String> last = new ArrayList<>();
    for (int i = Math.max(0, events - HISTORY); i < events; i++) {
      long e = recent[i % HISTORY];
      String kind = switch ((int) (e & 3)) {
        case 0 -> "d";
        case 1 -> "a";
        case 2 -> "A";
        default -> "n";
      };
      last.add(kind + (e >>> 2));
    }
    return what + "; " + held.size() + " held" + (held.isEmpty() ? "" : " (" + held.first() + ".." + held.last() + ")")
        + "; last events (d delivered, a ack, A multiple ack, n requeue): " + String.join(" ", last);
  }
}
