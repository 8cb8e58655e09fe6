package dev.inspection.worker;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How a finished batch is settled on the broker with as few calls as possible (issue 11): per channel,
 * one {@code basicAck(tag, multiple=true)} on the highest tag it can cover, single calls for the rest.
 * Pure: channels of any type.
 *
 * <p>A multiple ack settles every outstanding delivery of its channel up to its tag, so the caller must
 * hand in, for each channel, every delivery of that channel that is still outstanding and lower than the
 * highest one handed in. The worker's batches guarantee it: a slot takes each queue's deliveries in
 * arrival order (a prefix per channel), settles every delivery of a batch before the next batch's
 * settlement, and a delivery it leaves outstanding is only ever left on a channel that is being closed.
 * Even so, {@link Outcome#LEAVE} is honoured: no multiple ack reaches over a delivery left outstanding.
 */
final class AckPlan {
  private AckPlan() {}

  /** What becomes of one delivery. */
  enum Outcome {
    /** Processed (committed or dead-lettered): remove it from the queue. */
    ACK,
    /** Not processed, the channel stays open: return it to the queue now ({@code basicNack(tag, false, true)}). */
    REQUEUE,
    /** Not processed, the channel is closing: leave it outstanding, the close returns it to the queue. */
    LEAVE;

    /** Of two outcomes for parts of one delivery, the one that settles less: the delivery must wait for its slowest part. */
    static Outcome worse(Outcome a, Outcome b) {
      return a.ordinal() >= b.ordinal() ? a : b;
    }
  }

  record Settle<C>(C channel, long tag, Outcome outcome) {}

  /** One broker call. {@code requeue}: a nack that returns the delivery; otherwise an ack. */
  record Step<C>(C channel, long tag, boolean multiple, boolean requeue) {}

  static <C> List<Step<C>> plan(List<Settle<C>> settles) {
    Map<C, List<Settle<C>>> byChannel = new LinkedHashMap<>();
    for (Settle<C> s : settles) byChannel.computeIfAbsent(s.channel(), c -> new ArrayList<>()).add(s);
    List<Step<C>> steps = new ArrayList<>();
    for (List<Settle<C>> list : byChannel.values()) {
      list.sort(Comparator.comparingLong(Settle::tag));
      long firstLeft = list.stream().filter(s -> s.outcome() == Outcome.LEAVE).mapToLong(Settle::tag).min().orElse(Long.MAX_VALUE);
      // requeues first, so the multiple ack below cannot settle them
      for (Settle<C> s : list) {
        if (s.outcome() == Outcome.REQUEUE) steps.add(new Step<>(s.channel(), s.tag(), false, true));
      }
      long covered = -1;
      for (Settle<C> s : list) {
        if (s.outcome() == Outcome.ACK && s.tag() < firstLeft) covered = s.tag();
      }
      int below = 0;
      for (Settle<C> s : list) {
        if (s.outcome() == Outcome.ACK && s.tag() <= covered) below++;
      }
      if (covered >= 0) steps.add(new Step<>(list.get(0).channel(), covered, below > 1, false));
      for (Settle<C> s : list) {
        if (s.outcome() == Outcome.ACK && s.tag() > covered) steps.add(new Step<>(s.channel(), s.tag(), false, false));
      }
    }
    return steps;
  }

  /**
   * The deliveries a multiple-ack {@code step} of {@link #plan} is meant to settle: its channel's {@code ACK}s up to its
   * tag, ascending. Whatever else the channel still holds below the tag is not this batch's to settle.
   */
  static <C> long[] covered(List<Settle<C>> settles, Step<C> step) {
    return settles.stream().filter(s -> s.channel().equals(step.channel()) && s.outcome() == Outcome.ACK && s.tag() <= step.tag())
        .mapToLong(Settle::tag).sorted().toArray();
  }
}
