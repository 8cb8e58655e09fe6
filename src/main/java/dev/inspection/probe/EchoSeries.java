package dev.inspection.probe;

import io.vertx.core.json.JsonObject;
import java.util.function.Consumer;

/**
 * The echoes of one icmp check: {@code count} requests {@code interval} apart to one IPv4 or IPv6 address, each answered or
 * lost after {@code timeout}. Pure accounting (times are passed in, in nanoseconds); the engine drives it on its own
 * thread and calls {@code done} once, when every echo is answered or lost.
 *
 * <p>The payload's {@code latency_ms} is the <em>average</em> round trip of the answered echoes (min and max beside
 * it), in milliseconds with microsecond precision; it is absent when nothing answered.
 */
final class EchoSeries {
  final byte[] address;
  /** The interface of a link-local IPv6 address, else 0. */
  final int scopeId;
  final int count;
  final long intervalNanos;
  final long timeoutNanos;
  private final Consumer<EchoSeries> done;
  private int sent;
  private int received;
  private int lost;
  private long sumNanos;
  private long minNanos = Long.MAX_VALUE;
  private long maxNanos;
  private String error;
  private boolean completed;
  /** When the next echo goes (engine's clock), meaningful while {@link #wantsToSend()}. */
  long nextSendAt;

  EchoSeries(byte[] address, int count, long intervalNanos, long timeoutNanos, Consumer<EchoSeries> done) {
    this(address, 0, count, intervalNanos, timeoutNanos, done);
  }

  EchoSeries(byte[] address, int scopeId, int count, long intervalNanos, long timeoutNanos, Consumer<EchoSeries> done) {
    if (address.length != 4 && address.length != 16) throw new IllegalArgumentException("an icmp address has 4 (IPv4) or 16 (IPv6) bytes");
    if (count < 1) throw new IllegalArgumentException("count must be at least 1");
    this.address = address.clone();
    this.scopeId = scopeId;
    this.count = count;
    this.intervalNanos = intervalNanos;
    this.timeoutNanos = timeoutNanos;
    this.done = done;
  }

  boolean v6() {
    return address.length == 16;
  }

  boolean wantsToSend() {
    return sent < count;
  }

  /** An echo request left; the next one is due {@code interval} later. */
  void sent(long now) {
    sent++;
    nextSendAt = now + intervalNanos;
  }

  /** An echo request could not be sent ({@code why}): it counts as sent and lost. */
  void sendFailed(long now, String why) {
    sent(now);
    error = why;
    lost(null);
  }

  void replied(long rttNanos) {
    received++;
    sumNanos += rttNanos;
    minNanos = Math.min(minNanos, rttNanos);
    maxNanos = Math.max(maxNanos, rttNanos);
    finishIfDone();
  }

  /** An echo went unanswered; {@code why} replaces the error when given. */
  void lost(String why) {
    lost++;
    if (why != null) error = why;
    finishIfDone();
  }

  boolean finished() {
    return sent == count && received + lost == count;
  }

  /** Ends the check now ({@code why}: the engine closes): echoes not answered yet count as lost. */
  void abort(String why) {
    if (completed) return;
    error = why;
    sent = count;
    lost = count - received;
    finishIfDone();
  }

  private void finishIfDone() {
    if (finished() && !completed) {
      completed = true;
      done.accept(this);
    }
  }

  /** The check's payload: status UP when at least one echo was answered. */
  JsonObject payload() {
    JsonObject p = new JsonObject().put("check", "icmp").put("status", received > 0 ? "UP" : "DOWN");
    if (received > 0) {
      p.put("latency_ms", millis(sumNanos / received)).put("latency_min_ms", millis(minNanos)).put("latency_max_ms", millis(maxNanos));
    }
    p.put("loss_pct", Math.round((count - received) * 1000.0 / count) / 10.0).put("sent", sent).put("received", received);
    if (received == 0) p.put("error", error != null ? error : "no echo reply within " + timeoutNanos / 1_000_000 + " ms");
    return p;
  }

  private static double millis(long nanos) {
    return Math.round(nanos / 1000.0) / 1000.0;
  }
}
