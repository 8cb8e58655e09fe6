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
 * ICMP echo for the whole probe: one socket and one thread, however many checks are in flight (no thread per
 * ping). Callers hand in a check ({@link #ping}) from any thread; the engine's thread sends its echoes on time,
 * matches replies by ticket (identifier + sequence, {@link EchoBook}), declares echoes lost at their deadline, and
 * hands the finished check's payload to the caller's callback — on its own thread: callers hop back to their context.
 *
 * <p>The socket: an unprivileged ICMP datagram socket when {@code net.ipv4.ping_group_range} holds the process's
 * group, else a raw socket (CAP_NET_RAW). When neither opens, {@link #open} returns an engine that runs nothing and
 * says why ({@link #unavailable()}): icmp checks are refused with that message, the probe goes on.
 */
public final class IcmpEngine implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(IcmpEngine.class);
  /** The longest {@code poll()}: the loop looks at the closed flag at least this often. */
  private static final int MAX_WAIT_MS = 1000;
  /** Echoes sent before the replies are read again: a burst of thousands would otherwise fill the receive queue first. */
  private static final int MAX_BURST = 256;

  private final int fd;
  private final int wakeFd;
  private final boolean datagram;
  private final String unavailable;
  private final EchoBook book;
  private final ConcurrentLinkedQueue<EchoSeries> inbox = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean sleeping = new AtomicBoolean();
  private final byte[] wakeBytes = {1, 0, 0, 0, 0, 0, 0, 0};
  private volatile boolean closed;
  private boolean fdsClosed;
  private Thread thread;

  private IcmpEngine(int fd, int wakeFd, boolean datagram, String unavailable) {
    this.fd = fd;
    this.wakeFd = wakeFd;
    this.datagram = datagram;
    this.unavailable = unavailable;
    SecureRandom r = new SecureRandom();
    this.book = new EchoBook(r.nextLong(), datagram, r.nextInt());
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
    int flags = IcmpNative.SOCK_NONBLOCK | IcmpNative.SOCK_CLOEXEC;
    boolean datagram = true;
    int fd = IcmpNative.socket(IcmpNative.AF_INET, IcmpNative.SOCK_DGRAM | flags, IcmpNative.IPPROTO_ICMP);
    String dgramError = fd < 0 ? IcmpNative.lastError() : null;
    if (fd < 0) {
      datagram = false;
      fd = IcmpNative.socket(IcmpNative.AF_INET, IcmpNative.SOCK_RAW | flags, IcmpNative.IPPROTO_ICMP);
    }
    if (fd < 0) {
      return refused(noSocket(dgramError, IcmpNative.lastError()));
    }
    int wake = IcmpNative.eventfd(0, IcmpNative.EFD_NONBLOCK | IcmpNative.EFD_CLOEXEC);
    if (wake < 0) {
      String why = IcmpNative.lastError();
      IcmpNative.close(fd);
      return refused("icmp checks cannot create their eventfd: " + why);
    }
    tune(fd, datagram);
    IcmpEngine e = new IcmpEngine(fd, wake, datagram, null);
    e.thread = new Thread(e::loop, "icmp-engine");
    e.thread.setDaemon(true);
    e.thread.start();
    log.info("icmp checks use {} socket", datagram ? "an unprivileged ICMP datagram" : "a raw ICMP");
    return e;
  }

  /** Why no ICMP socket opens, and what the operator can do about it. */
  static String noSocket(String datagramError, String rawError) {
    return "icmp checks need an ICMP socket and this process may open none: add its group to the sysctl "
        + "net.ipv4.ping_group_range (unprivileged datagram sockets: " + datagramError + ") or give it CAP_NET_RAW "
        + "(raw sockets: " + rawError + "; systemd: AmbientCapabilities=CAP_NET_RAW, docker: --cap-add NET_RAW)";
  }

  /** An engine that runs nothing and refuses every check with {@code why}. */
  static IcmpEngine refused(String why) {
    return new IcmpEngine(-1, -1, false, why);
  }

  private static void tune(int fd, boolean datagram) {
    int[] size = {4 << 20};
    // a burst of thousands of replies must not overflow the receive queue; FORCE passes rmem_max when privileged
    if (IcmpNative.setsockopt(fd, IcmpNative.SOL_SOCKET, IcmpNative.SO_RCVBUFFORCE, size, 4) < 0) {
      IcmpNative.setsockopt(fd, IcmpNative.SOL_SOCKET, IcmpNative.SO_RCVBUF, size, 4);
    }
    IcmpNative.setsockopt(fd, IcmpNative.SOL_SOCKET, IcmpNative.SO_SNDBUF, new int[] {1 << 20}, 4);
    if (!datagram) {
      // a raw socket sees every ICMP message of the host: let only echo replies through
      IcmpNative.setsockopt(fd, IcmpNative.SOL_RAW, IcmpNative.ICMP_FILTER, new int[] {~(1 << IcmpPacket.ECHO_REPLY)}, 4);
    }
  }

  /** Null when the engine can ping; else why it cannot (naming ping_group_range and CAP_NET_RAW). */
  public String unavailable() {
    return unavailable;
  }

  /** "datagram" or "raw", null when unavailable. */
  public String socketKind() {
    return unavailable != null ? null : datagram ? "datagram" : "raw";
  }

  /**
   * Sends {@code count} echoes {@code intervalMs} apart to {@code ipv4} (4 bytes), each lost after {@code timeoutMs};
   * {@code done} gets the payload ({@link EchoSeries#payload}) on the engine's thread.
   */
  public void ping(byte[] ipv4, int count, long intervalMs, long timeoutMs, Consumer<JsonObject> done) {
    EchoSeries s = new EchoSeries(ipv4, count, intervalMs * 1_000_000, timeoutMs * 1_000_000, x -> done.accept(x.payload()));
    if (unavailable != null || closed) {
      s.abort(unavailable != null ? unavailable : "the probe is stopping");
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
    IcmpNative.close(fd);
    IcmpNative.close(wakeFd);
  }

  private void loop() {
    PriorityQueue<EchoSeries> due = new PriorityQueue<>(Comparator.comparingLong(x -> x.nextSendAt));
    byte[] buf = new byte[2048];
    byte[] from = new byte[16];
    byte[] drain = new byte[8];
    int[] fromLen = new int[1];
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
          receive(buf, from, fromLen);
          book.expire(System.nanoTime());
          long wakeAt = Math.min(due.isEmpty() ? Long.MAX_VALUE : due.peek().nextSendAt, book.nextDeadline());
          long waitNanos = wakeAt - System.nanoTime();
          int waitMs = waitNanos <= 0 ? 0 : (int) Math.min(MAX_WAIT_MS, (waitNanos + 999_999) / 1_000_000);
          sleeping.set(true);
          if (!inbox.isEmpty() || closed) {
            sleeping.set(false);
            continue;
          }
          int[] fds = IcmpNative.pollFds(fd, wakeFd);
          IcmpNative.poll(fds, 2, waitMs);
          sleeping.set(false);
          if (IcmpNative.revents(fds, 1) != 0) IcmpNative.read(wakeFd, drain, 8);
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
      book.abandonAll(why);
      closeFds();
    }
  }

  private void send(EchoSeries s, long now) {
    int ticket = book.ticket();
    byte[] packet = IcmpPacket.echoRequest(book.magic(), ticket);
    long n = IcmpNative.sendto(fd, packet, packet.length, 0, IcmpNative.sockaddr(s.address), 16);
    if (n >= 0) {
      book.sent(ticket, s, now);
      return;
    }
    int errno = Native.getLastError();
    if (errno == IcmpNative.EAGAIN || errno == IcmpNative.ENOBUFS || errno == IcmpNative.EINTR) {
      s.nextSendAt = now + 1_000_000; // the send queue is full: this echo goes a millisecond later
    } else {
      s.sendFailed(now, "sendto: " + IcmpNative.error(errno));
    }
  }

  private void receive(byte[] buf, byte[] from, int[] fromLen) {
    byte[] source = new byte[4];
    while (true) {
      fromLen[0] = from.length;
      long n = IcmpNative.recvfrom(fd, buf, buf.length, IcmpNative.MSG_DONTWAIT, from, fromLen);
      if (n < 0) return; // EAGAIN: nothing more queued (other errors: the next poll tells again)
      long at = System.nanoTime();
      IcmpPacket.Reply r = IcmpPacket.parseReply(buf, (int) n, !datagram);
      if (r == null) continue;
      System.arraycopy(from, 4, source, 0, 4);
      book.replied(r, source, at);
    }
  }
}
