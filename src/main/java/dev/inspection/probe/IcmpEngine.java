package dev.inspection.probe;

import com.sun.jna.Native;
import io.vertx.core.json.JsonObject;
import java.security.SecureRandom;
import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ICMP echo for the whole probe: one socket per address family (ICMPv4, ICMPv6) and one thread, however many checks
 * are in flight (no thread per ping). Callers hand in a check ({@link #ping}) from any thread; the engine's thread sends its echoes on time,
 * matches replies by ticket (identifier + sequence, {@link EchoBook}), declares echoes lost at their deadline, and
 * hands the finished check's payload to the caller's callback — on its own thread: callers hop back to their context.
 *
 * <p>The socket: an unprivileged ICMP datagram socket when {@code net.ipv4.ping_group_range} holds the process's
 * group, else a raw socket (CAP_NET_RAW); the same for ICMPv6 (the same sysctl governs both). When no IPv4 socket opens,
 * {@link #open} returns an engine that runs nothing and says why ({@link #unavailable()}): icmp checks are refused
 * with that message, the probe goes on. When only the ICMPv6 socket does not open (a host without IPv6), IPv6 checks
 * are answered DOWN with the reason and IPv4 ones run.
 */
public final class IcmpEngine implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(IcmpEngine.class);
  /** The longest {@code poll()}: the loop looks at the closed flag at least this often. */
  private static final int MAX_WAIT_MS = 1000;
  /** Echoes sent before the replies are read again: a burst of thousands would otherwise fill the receive queue first. */
  private static final int MAX_BURST = 256;

  /** One family's socket and the echoes in flight on it. */
  private static final class Family {
    final int fd;
    final boolean datagram;
    final boolean v6;
    final EchoBook book;
    /** The reply's source address, copied out of the {@code sockaddr} recvfrom fills. */
    final byte[] source;

    Family(int fd, boolean datagram, boolean v6, SecureRandom r) {
      this.fd = fd;
      this.datagram = datagram;
      this.v6 = v6;
      this.book = new EchoBook(r.nextLong(), datagram, r.nextInt());
      this.source = new byte[v6 ? 16 : 4];
    }
  }

  private final Family v4;
  /** Null when no ICMPv6 socket opens: {@link #v6Unavailable} says why. */
  private final Family v6;
  private final String v6Unavailable;
  private final int wakeFd;
  private final String unavailable;
  private final ConcurrentLinkedQueue<EchoSeries> inbox = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean sleeping = new AtomicBoolean();
  private final byte[] wakeBytes = {1, 0, 0, 0, 0, 0, 0, 0};
  private volatile boolean closed;
  private boolean fdsClosed;
  private Thread thread;

  private IcmpEngine(Family v4, Family v6, String v6Unavailable, int wakeFd, String unavailable) {
    this.v4 = v4;
    this.v6 = v6;
    this.v6Unavailable = v6Unavailable;
    this.wakeFd = wakeFd;
    this.unavailable = unavailable;
  }

  /**
   * Opens the socket on the calling thread (so it belongs to that thread's network namespace) and starts the engine's
   * thread. Never throws: an engine that cannot ping carries the reason.
   */
  public static IcmpEngine open() {
    try {
      IcmpNative.load();
    } catch (LinkageError | RuntimeException e) {
      return refused("libc cannot be loaded (" + e + "); icmp checks need Linux");
    }
    SecureRandom r = new SecureRandom();
    String[] why = new String[1];
    Family v4 = socket(false, r, why);
    if (v4 == null) return refused(why[0]);
    Family v6 = socket(true, r, why);
    String v6Unavailable = v6 == null ? "icmp checks of IPv6 addresses cannot open an ICMPv6 socket: " + why[0] : null;
    int wake = IcmpNative.eventfd(0, IcmpNative.EFD_NONBLOCK | IcmpNative.EFD_CLOEXEC);
    if (wake < 0) {
      String error = IcmpNative.lastError();
      IcmpNative.close(v4.fd);
      if (v6 != null) IcmpNative.close(v6.fd);
      return refused("icmp checks cannot create their eventfd: " + error);
    }
    IcmpEngine e = new IcmpEngine(v4, v6, v6Unavailable, wake, null);
    e.thread = new Thread(e::loop, "icmp-engine");
    e.thread.setDaemon(true);
    e.thread.start();
    log.info("icmp checks use {} socket; IPv6: {}", v4.datagram ? "an unprivileged ICMP datagram" : "a raw ICMP",
        v6 == null ? v6Unavailable : v6.datagram ? "an unprivileged ICMPv6 datagram socket" : "a raw ICMPv6 socket");
    return e;
  }

  /** One family's socket, datagram first, else raw, tuned; null with the reason in {@code why[0]} when neither opens. */
  private static Family socket(boolean v6, SecureRandom r, String[] why) {
    int flags = IcmpNative.SOCK_NONBLOCK | IcmpNative.SOCK_CLOEXEC;
    int domain = v6 ? IcmpNative.AF_INET6 : IcmpNative.AF_INET;
    int protocol = v6 ? IcmpNative.IPPROTO_ICMPV6 : IcmpNative.IPPROTO_ICMP;
    boolean datagram = true;
    int fd = IcmpNative.socket(domain, IcmpNative.SOCK_DGRAM | flags, protocol);
    String dgramError = fd < 0 ? IcmpNative.lastError() : null;
    if (fd < 0) {
      datagram = false;
      fd = IcmpNative.socket(domain, IcmpNative.SOCK_RAW | flags, protocol);
    }
    if (fd < 0) {
      why[0] = noSocket(dgramError, IcmpNative.lastError());
      return null;
    }
    tune(fd, datagram, v6);
    return new Family(fd, datagram, v6, r);
  }

  /** Why no ICMP socket opens, and what the operator can do about it. */
  static String noSocket(String datagramError, String rawError) {
    return "icmp checks need an ICMP socket and this process may open none: add its group to the sysctl "
        + "net.ipv4.ping_group_range (unprivileged datagram sockets: " + datagramError + ") or give it CAP_NET_RAW "
        + "(raw sockets: " + rawError + "; systemd: AmbientCapabilities=CAP_NET_RAW, docker: --cap-add NET_RAW)";
  }

  /** An engine that runs nothing and refuses every check with {@code why}. */
  static IcmpEngine refused(String why) {
    return new IcmpEngine(null, null, why, -1, why);
  }

  private static void tune(int fd, boolean datagram, boolean v6) {
    int[] size = {4 << 20};
    // a burst of thousands of replies must not overflow the receive queue; FORCE passes rmem_max when privileged
    if (IcmpNative.setsockopt(fd, IcmpNative.SOL_SOCKET, IcmpNative.SO_RCVBUFFORCE, size, 4) < 0) {
      IcmpNative.setsockopt(fd, IcmpNative.SOL_SOCKET, IcmpNative.SO_RCVBUF, size, 4);
    }
    IcmpNative.setsockopt(fd, IcmpNative.SOL_SOCKET, IcmpNative.SO_SNDBUF, new int[] {1 << 20}, 4);
    if (!datagram && !v6) {
      // a raw socket sees every ICMP message of the host: let only echo replies through
      IcmpNative.setsockopt(fd, IcmpNative.SOL_RAW, IcmpNative.ICMP_FILTER, new int[] {~(1 << IcmpPacket.ECHO_REPLY)}, 4);
    } else if (!datagram) {
      int[] filter = {-1, -1, -1, -1, -1, -1, -1, -1}; // ICMPv6's filter: block all but type 129
      filter[IcmpPacket.ECHO6_REPLY >> 5] &= ~(1 << (IcmpPacket.ECHO6_REPLY & 31));
      IcmpNative.setsockopt(fd, IcmpNative.IPPROTO_ICMPV6, IcmpNative.ICMP6_FILTER, filter, 32);
    }
  }

  /** Null when the engine can ping; else why it cannot (naming ping_group_range and CAP_NET_RAW). */
  public String unavailable() {
    return unavailable;
  }

  /** "datagram" or "raw" (the IPv4 socket), null when unavailable. */
  public String socketKind() {
    return unavailable != null ? null : v4.datagram ? "datagram" : "raw";
  }

  /** The IPv6 socket's kind, null when there is none ({@link #unavailable()} or no ICMPv6 socket opened). */
  public String socketKind6() {
    return v6 == null ? null : v6.datagram ? "datagram" : "raw";
  }

  /** {@link #ping(byte[], int, int, long, long, Consumer)} of an address without a scope. */
  public void ping(byte[] address, int count, long intervalMs, long timeoutMs, Consumer<JsonObject> done) {
    ping(address, 0, count, intervalMs, timeoutMs, done);
  }

  /**
   * Sends {@code count} echoes {@code intervalMs} apart to {@code address} (4 bytes IPv4, 16 bytes IPv6, with the
   * interface {@code scopeId} of a link-local one), each lost after {@code timeoutMs}; {@code done} gets the payload
   * ({@link EchoSeries#payload}) on the engine's thread.
   */
  public void ping(byte[] address, int scopeId, int count, long intervalMs, long timeoutMs, Consumer<JsonObject> done) {
    EchoSeries s = new EchoSeries(address, scopeId, count, intervalMs * 1_000_000, timeoutMs * 1_000_000, x -> done.accept(x.payload()));
    if (unavailable != null || closed || (s.v6() && v6 == null)) {
      s.abort(unavailable != null ? unavailable : closed ? "the probe is stopping" : v6Unavailable);
      return;
    }
    inbox.add(s);
    if (closed && inbox.remove(s)) {
      s.abort("the probe is stopping"); // the engine's last drain of the inbox may have passed already
      return;
    }
    if (sleeping.compareAndSet(true, false)) wake();
  }

  @Override
  public void close() {
    if (unavailable != null || closed) return;
    closed = true;
    wake();
  }

  /** Ends the engine's poll(). Under the lock that closes the eventfd: a write never reaches a number reused since. */
  private synchronized void wake() {
    if (!fdsClosed) IcmpNative.write(wakeFd, wakeBytes, 8);
  }

  private synchronized void closeFds() {
    fdsClosed = true;
    IcmpNative.close(v4.fd);
    if (v6 != null) IcmpNative.close(v6.fd);
    IcmpNative.close(wakeFd);
  }

  private void loop() {
    PriorityQueue<EchoSeries> due = new PriorityQueue<>(Comparator.comparingLong(x -> x.nextSendAt));
    byte[] buf = new byte[2048];
    byte[] from = new byte[28];
    byte[] drain = new byte[8];
    int[] fromLen = new int[1];
    int[] pollOn = v6 == null ? new int[] {v4.fd, wakeFd} : new int[] {v4.fd, v6.fd, wakeFd};
    try {
      while (!closed) {
        try {
          long now = System.nanoTime();
          for (EchoSeries s; (s = inbox.poll()) != null; ) {
            s.nextSendAt = now;
            due.add(s);
          }
          int burst = 0;
          while (!due.isEmpty() && due.peek().nextSendAt <= now && burst++ < MAX_BURST) {
            EchoSeries s = due.poll();
            send(s, now);
            if (s.wantsToSend()) due.add(s);
          }
          receive(v4, buf, from, fromLen);
          if (v6 != null) receive(v6, buf, from, fromLen);
          long at = System.nanoTime();
          v4.book.expire(at);
          if (v6 != null) v6.book.expire(at);
          long deadline = Math.min(v4.book.nextDeadline(), v6 == null ? Long.MAX_VALUE : v6.book.nextDeadline());
          long wakeAt = Math.min(due.isEmpty() ? Long.MAX_VALUE : due.peek().nextSendAt, deadline);
          long waitNanos = wakeAt - System.nanoTime();
          int waitMs = waitNanos <= 0 ? 0 : (int) Math.min(MAX_WAIT_MS, (waitNanos + 999_999) / 1_000_000);
          sleeping.set(true);
          if (!inbox.isEmpty() || closed) {
            sleeping.set(false);
            continue;
          }
          int[] fds = IcmpNative.pollFds(pollOn);
          IcmpNative.poll(fds, pollOn.length, waitMs);
          sleeping.set(false);
          if (IcmpNative.revents(fds, pollOn.length - 1) != 0) IcmpNative.read(wakeFd, drain, 8);
        } catch (RuntimeException e) {
          log.error("icmp engine: unexpected failure, going on", e);
        }
      }
    } catch (Error e) {
      log.error("icmp engine stopped: icmp checks are answered DOWN from now on", e);
      throw e;
    } finally {
      closed = true; // a ping() from now on is answered at once
      String why = "the probe is stopping";
      for (EchoSeries s; (s = inbox.poll()) != null; ) s.abort(why);
      for (EchoSeries s : due) s.abort(why);
      v4.book.abandonAll(why);
      if (v6 != null) v6.book.abandonAll(why);
      closeFds();
    }
  }

  private void send(EchoSeries s, long now) {
    Family f = s.v6() ? v6 : v4;
    int ticket = f.book.ticket();
    byte[] packet = f.v6 ? IcmpPacket.echo6Request(f.book.magic(), ticket) : IcmpPacket.echoRequest(f.book.magic(), ticket);
    byte[] to = f.v6 ? IcmpNative.sockaddr6(s.address, s.scopeId) : IcmpNative.sockaddr(s.address);
    long n = IcmpNative.sendto(f.fd, packet, packet.length, 0, to, to.length);
    if (n >= 0) {
      f.book.sent(ticket, s, now);
      return;
    }
    int errno = Native.getLastError();
    if (errno == IcmpNative.EAGAIN || errno == IcmpNative.ENOBUFS || errno == IcmpNative.EINTR) {
      s.nextSendAt = now + 1_000_000; // the send queue is full: this echo goes a millisecond later
    } else {
      s.sendFailed(now, "sendto: " + IcmpNative.error(errno));
    }
  }

  private static void receive(Family f, byte[] buf, byte[] from, int[] fromLen) {
    while (true) {
      fromLen[0] = from.length;
      long n = IcmpNative.recvfrom(f.fd, buf, buf.length, IcmpNative.MSG_DONTWAIT, from, fromLen);
      if (n < 0) return; // EAGAIN: nothing more queued (other errors: the next poll tells again)
      long at = System.nanoTime();
      IcmpPacket.Reply r = f.v6 ? IcmpPacket.parseReply6(buf, (int) n) : IcmpPacket.parseReply(buf, (int) n, !f.datagram);
      if (r == null) continue;
      // sockaddr_in: the address at byte 4; sockaddr_in6: at byte 8 (after port and flow info)
      System.arraycopy(from, f.v6 ? 8 : 4, f.source, 0, f.source.length);
      f.book.replied(r, f.source, at);
    }
  }
}
