package dev.inspection.probe;

/**
 * ICMP echo packets, pure: ICMPv4 (RFC 792) and ICMPv6 (RFC 4443, the same layout with types 128/129): building a
 * request, the Internet checksum, reading a reply. An ICMPv6 checksum covers a pseudo-header with both addresses, so
 * the kernel fills it in on send and checks it on receipt (datagram and raw sockets alike); it is left 0 here.
 *
 * <p>A request carries a 32-bit ticket twice: in the header (identifier = high 16 bits, sequence = low 16 bits) and in
 * the payload after an 8-byte magic number of the engine that sent it. A raw socket sees every echo reply of the host
 * (other processes' pings too), so a reply counts only when magic, ticket and header agree. On a datagram ("ping")
 * socket the kernel replaces the identifier with its own, so there only the sequence is compared with the ticket.
 */
final class IcmpPacket {
  static final int ECHO_REPLY = 0;
  static final int ECHO_REQUEST = 8;
  static final int ECHO6_REQUEST = 128;
  static final int ECHO6_REPLY = 129;
  static final int HEADER = 8;
  /** magic (8) + ticket (4) + 4 bytes of padding. */
  static final int PAYLOAD = 16;
  static final int LENGTH = HEADER + PAYLOAD;

  private IcmpPacket() {}

  /** One echo reply as read from the wire. */
  record Reply(int identifier, int sequence, long magic, int ticket) {}

  /** An ICMPv4 echo request for {@code ticket}, its checksum filled in. */
  static byte[] echoRequest(long magic, int ticket) {
    byte[] p = echo(ECHO_REQUEST, magic, ticket);
    putShort(p, 2, checksum(p, 0, p.length));
    return p;
  }

  /** An ICMPv6 echo request for {@code ticket}; the kernel computes its checksum. */
  static byte[] echo6Request(long magic, int ticket) {
    return echo(ECHO6_REQUEST, magic, ticket);
  }

  private static byte[] echo(int type, long magic, int ticket) {
    byte[] p = new byte[LENGTH];
    p[0] = (byte) type;
    p[1] = 0;
    putShort(p, 4, ticket >>> 16);
    putShort(p, 6, ticket & 0xffff);
    putLong(p, HEADER, magic);
    putInt(p, HEADER + 8, ticket);
    return p;
  }

  /** The Internet checksum (RFC 1071) of {@code len} bytes from {@code off}: 0 over a packet whose checksum is right. */
  static int checksum(byte[] b, int off, int len) {
    long sum = 0;
    int i = off;
    for (; i + 1 < off + len; i += 2) sum += ((b[i] & 0xff) << 8) | (b[i + 1] & 0xff);
    if (i < off + len) sum += (b[i] & 0xff) << 8;
    while ((sum >>> 16) != 0) sum = (sum & 0xffff) + (sum >>> 16);
    return (int) (~sum & 0xffff);
  }

  /**
   * The echo reply in the first {@code len} bytes of {@code buf}, or null when they hold anything else (another ICMP
   * type, a short or corrupt packet). {@code withIpHeader}: a raw socket delivers the IPv4 header first; a datagram
   * socket does not.
   */
  static Reply parseReply(byte[] buf, int len, boolean withIpHeader) {
    int off = 0;
    if (withIpHeader) {
      if (len < 20 || (buf[0] & 0xf0) != 0x40) return null;
      off = (buf[0] & 0x0f) * 4;
      if (off < 20) return null;
    }
    if (len - off < LENGTH) return null;
    if ((buf[off] & 0xff) != ECHO_REPLY || buf[off + 1] != 0) return null;
    if (checksum(buf, off, len - off) != 0) return null;
    return reply(buf, off);
  }

  /**
   * The ICMPv6 echo reply in the first {@code len} bytes of {@code buf}, or null. Both socket kinds deliver ICMPv6
   * without the IPv6 header, the checksum already verified by the kernel.
   */
  static Reply parseReply6(byte[] buf, int len) {
    if (len < LENGTH || (buf[0] & 0xff) != ECHO6_REPLY || buf[1] != 0) return null;
    return reply(buf, 0);
  }

  private static Reply reply(byte[] buf, int off) {
    return new Reply(getShort(buf, off + 4), getShort(buf, off + 6), getLong(buf, off + HEADER), getInt(buf, off + HEADER + 8));
  }

  private static void putShort(byte[] b, int at, int v) {
    b[at] = (byte) (v >>> 8);
    b[at + 1] = (byte) v;
  }

  private static void putInt(byte[] b, int at, int v) {
    putShort(b, at, v >>> 16);
    putShort(b, at + 2, v & 0xffff);
  }

  private static void putLong(byte[] b, int at, long v) {
    putInt(b, at, (int) (v >>> 32));
    putInt(b, at + 4, (int) v);
  }

  private static int getShort(byte[] b, int at) {
    return ((b[at] & 0xff) << 8) | (b[at + 1] & 0xff);
  }

  private static int getInt(byte[] b, int at) {
    return (getShort(b, at) << 16) | getShort(b, at + 2);
  }

  private static long getLong(byte[] b, int at) {
    return ((long) getInt(b, at) << 32) | (getInt(b, at + 4) & 0xffffffffL);
  }
}
