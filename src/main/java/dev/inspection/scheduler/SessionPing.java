package dev.inspection.scheduler;

/**
 * When the leader's lock session counts as unanswered. The leader pings its session every election tick;
 * an answer missing for {@code patience} ticks means the connection is gone (a network partition leaves no
 * close to notice) and the leader steps down.
 *
 * <p>A stall of this process is not the session's fault: after a blocked event loop or a long GC pause
 * the tick itself comes late, and the answer (already in the socket) has had no chance to be read. A late
 * tick therefore restarts the outstanding ping's clock instead of deposing the leader: stepping down on it
 * raised the term twice within a second at start-up (term 2, then term 3 on the same node), and the first
 * term's work failed as deposed. If the pause was long enough for PostgreSQL to end the idle session, the
 * connection's close says so, and the leader's writes are fenced by the term either way.
 *
 * <p>Pure: times in milliseconds of one monotonic clock, passed in.
 */
final class SessionPing {
  enum Verdict {
    /** No ping is outstanding: send one now. */
    SEND,
    /** A ping is outstanding and still within its window. */
    WAIT,
    /** A ping has been unanswered for {@code patience} on-time ticks: the session is lost. */
    LOST
  }

  private final long intervalMs;
  private final int patience;
  private long sentAt = -1;
  private long lastTick = -1;
  /** The longest gap between two ticks of this session: a stall of this process shows here. */
  private long longestGap;
  private long answeredAt = -1;

  SessionPing(long intervalMs, int patience) {
    if (intervalMs <= 0 || patience < 1) throw new IllegalArgumentException("interval " + intervalMs + " ms, patience " + patience);
    this.intervalMs = intervalMs;
    this.patience = patience;
  }

  /** One election tick at {@code now}. */
  Verdict tick(long now) {
    boolean late = lastTick >= 0 && now - lastTick > 2 * intervalMs;
    if (lastTick >= 0) longestGap = Math.max(longestGap, now - lastTick);
    lastTick = now;
    if (sentAt < 0) {
      sentAt = now;
      return Verdict.SEND;
    }
    if (late) {
      sentAt = now; // this process stalled: give the answer a fresh window
      return Verdict.WAIT;
    }
    return now - sentAt > patience * intervalMs ? Verdict.LOST : Verdict.WAIT;
  }

  /** The outstanding ping was answered. */
  void answered(long now) {
    sentAt = -1;
    answeredAt = now;
  }

  /**
   * What a step-down message says about the session's last moments at {@code now}: when this process last ticked
   * and last heard an answer, and its longest gap between ticks. A late last tick means this process stalled (a
   * blocked event loop, a GC pause, no CPU); a recent tick with an old answer means the connection or PostgreSQL did.
   */
  String describe(long now) {
    return "last tick " + ago(lastTick, now) + ", last answer " + ago(answeredAt, now) + ", longest gap between ticks "
        + longestGap + " ms (ticks every " + intervalMs + " ms)";
  }

  private static String ago(long at, long now) {
    return at < 0 ? "none" : (now - at) + " ms ago";
  }

  /** A new session (or none): nothing is outstanding, no tick seen. */
  void reset() {
    sentAt = -1;
    lastTick = -1;
    longestGap = 0;
    answeredAt = -1;
  }
}
