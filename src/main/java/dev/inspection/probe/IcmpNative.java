package dev.inspection.probe;

import com.sun.jna.Native;
import java.nio.ByteOrder;

/**
 * The few libc calls ICMP echo needs (Linux, 64-bit: {@code long} for size_t), through JNA so the build stays on JDK 17. Every socket is
 * non-blocking; the engine's one thread waits in {@code poll()} on the socket and an eventfd that wakes it for new
 * work. Not thread-safe by itself: {@link IcmpEngine} owns the socket.
 */
final class IcmpNative {
  static final int AF_INET = 2;
  static final int AF_INET6 = 10;
  static final int IPPROTO_ICMPV6 = 58;
  /** {@code struct icmp6_filter} (8 words, a set bit blocks that type), an option of level IPPROTO_ICMPV6. */
  static final int ICMP6_FILTER = 1;
  static final int SOCK_DGRAM = 2;
  static final int SOCK_RAW = 3;
  static final int SOCK_NONBLOCK = 0x800;
  static final int SOCK_CLOEXEC = 0x80000;
  static final int IPPROTO_ICMP = 1;
  static final int SOL_SOCKET = 1;
  static final int SO_SNDBUF = 7;
  static final int SO_RCVBUF = 8;
  static final int SO_RCVBUFFORCE = 33;
  static final int SOL_RAW = 255;
  static final int ICMP_FILTER = 1;
  static final int MSG_DONTWAIT = 0x40;
  static final int POLLIN = 1;
  static final int EFD_NONBLOCK = 0x800;
  static final int EFD_CLOEXEC = 0x80000;
  static final int EAGAIN = 11;
  static final int ENOBUFS = 105;
  static final int EINTR = 4;

  // JNA direct mapping (static natives bound once at class initialisation): several times cheaper per call than an
  // interface proxy, and the engine makes a few calls per echo. JNA keeps errno after each call (lastError).
  static {
    Native.register("c");
  }

  private IcmpNative() {}

  /** Loads libc; throws a {@link LinkageError} where it cannot (not Linux, no native JNA for this platform). */
  static void load() {
    // the static initialiser did it
  }

  static native int socket(int domain, int type, int protocol);

  static native int setsockopt(int fd, int level, int name, int[] value, int len);

  static native long sendto(int fd, byte[] buf, long len, int flags, byte[] addr, int addrLen);

  static native long recvfrom(int fd, byte[] buf, long len, int flags, byte[] addr, int[] addrLen);

  static native int poll(int[] fds, long nfds, int timeoutMs);

  static native int eventfd(int initval, int flags);

  static native long read(int fd, byte[] buf, long n);

  static native long write(int fd, byte[] buf, long n);

  static native int close(int fd);

  static native String strerror(int errnum);

  static String lastError() {
    return error(Native.getLastError());
  }

  static String error(int errno) {
    return strerror(errno) + " (errno " + errno + ")";
  }

  /** A {@code struct sockaddr_in} for {@code ipv4} (4 bytes, network order), port 0. */
  static byte[] sockaddr(byte[] ipv4) {
    byte[] sa = new byte[16];
    sa[0] = (byte) AF_INET; // sa_family is in host order: little-endian x86_64 / aarch64
    System.arraycopy(ipv4, 0, sa, 4, 4);
    return sa;
  }

  /**
   * A {@code struct sockaddr_in6} (28 bytes) for {@code ipv6} (16 bytes, network order), port 0, flow 0, and its
   * {@code scopeId} (the interface of a link-local address; 0 for others).
   */
  static byte[] sockaddr6(byte[] ipv6, int scopeId) {
    byte[] sa = new byte[28];
    sa[0] = (byte) AF_INET6; // host order, as above
    System.arraycopy(ipv6, 0, sa, 8, 16);
    for (int i = 0; i < 4; i++) sa[24 + i] = (byte) (scopeId >>> (8 * i)); // sin6_scope_id: host order (little-endian)
    return sa;
  }

  /** {@code struct pollfd}s waiting for input on {@code fds}, 2 ints each. */
  static int[] pollFds(int... fds) {
    int[] out = new int[2 * fds.length];
    for (int i = 0; i < fds.length; i++) {
      out[2 * i] = fds[i];
      out[2 * i + 1] = events(POLLIN);
    }
    return out;
  }

  /** The {@code revents} of pollfd {@code i} of {@link #pollFds}. */
  static int revents(int[] fds, int i) {
    int word = fds[2 * i + 1];
    return ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN ? word >>> 16 : word & 0xffff;
  }

  private static int events(int events) {
    return ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN ? events : events << 16;
  }
}
