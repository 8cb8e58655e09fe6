package dev.inspection.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class IcmpPacketTest {
  /** What the peer sends back for {@code request}: type 0, checksum recomputed, optionally behind an IPv4 header. */
  static byte[] replyTo(byte[] request, boolean withIpHeader) {
    byte[] icmp = request.clone();
    icmp[0] = IcmpPacket.ECHO_REPLY;
    icmp[2] = 0;
    icmp[3] = 0;
    int sum = IcmpPacket.checksum(icmp, 0, icmp.length);
    icmp[2] = (byte) (sum >>> 8);
    icmp[3] = (byte) sum;
    if (!withIpHeader) return icmp;
    byte[] ip = new byte[20 + icmp.length];
    ip[0] = 0x45; // IPv4, 5 words of header
    ip[9] = 1; // ICMP
    System.arraycopy(icmp, 0, ip, 20, icmp.length);
    return ip;
  }

  @Test
  void checksumIsTheRfc1071OnesComplementSum() {
    // RFC 1071's example: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2, checksum 220d
    byte[] b = {0x00, 0x01, (byte) 0xf2, 0x03, (byte) 0xf4, (byte) 0xf5, (byte) 0xf6, (byte) 0xf7};
    assertEquals(0x220d, IcmpPacket.checksum(b, 0, b.length));
    // an odd length pads with a zero byte
    assertEquals(IcmpPacket.checksum(new byte[] {1, 2, 3, 0}, 0, 4), IcmpPacket.checksum(new byte[] {1, 2, 3}, 0, 3));
  }

  @Test
  void anEchoRequestCarriesItsTicketInHeaderAndPayloadAndAValidChecksum() {
    byte[] p = IcmpPacket.echoRequest(0x1122334455667788L, 0xabcd1234);
    assertEquals(IcmpPacket.LENGTH, p.length);
    assertEquals(IcmpPacket.ECHO_REQUEST, p[0]);
    assertEquals(0, p[1]);
    assertEquals(0, IcmpPacket.checksum(p, 0, p.length), "a packet with its checksum sums to zero");
    assertEquals(0xab, p[4] & 0xff);
    assertEquals(0xcd, p[5] & 0xff);
    assertEquals(0x12, p[6] & 0xff);
    assertEquals(0x34, p[7] & 0xff);
  }

  @Test
  void aReplyIsReadBackFromARawSocketBehindItsIpHeaderAndFromADatagramSocketWithout() {
    byte[] request = IcmpPacket.echoRequest(42L, 0x00070009);
    IcmpPacket.Reply raw = IcmpPacket.parseReply(replyTo(request, true), request.length + 20, true);
    assertEquals(new IcmpPacket.Reply(7, 9, 42L, 0x00070009), raw);
    byte[] dgram = replyTo(request, false);
    assertEquals(new IcmpPacket.Reply(7, 9, 42L, 0x00070009), IcmpPacket.parseReply(dgram, dgram.length, false));
  }

  @Test
  void anythingButAnIntactEchoReplyIsIgnored() {
    byte[] request = IcmpPacket.echoRequest(42L, 5);
    assertNull(IcmpPacket.parseReply(request, request.length, false), "our own request, seen on a raw socket over loopback");
    byte[] reply = replyTo(request, false);
    assertNotNull(IcmpPacket.parseReply(reply, reply.length, false));
    byte[] corrupt = reply.clone();
    corrupt[12] ^= 1;
    assertNull(IcmpPacket.parseReply(corrupt, corrupt.length, false), "bad checksum");
    assertNull(IcmpPacket.parseReply(reply, 10, false), "short");
    byte[] notIpv4 = replyTo(request, true);
    notIpv4[0] = 0x60;
    assertNull(IcmpPacket.parseReply(notIpv4, notIpv4.length, true), "not an IPv4 header");
  }

  @Test
  void anIcmpv6EchoHasTypes128And129AndLeavesTheChecksumToTheKernel() {
    byte[] request = IcmpPacket.echo6Request(42L, 0x00070009);
    assertEquals(IcmpPacket.LENGTH, request.length);
    assertEquals(128, request[0] & 0xff);
    assertEquals(0, request[2] | request[3], "the kernel fills in the checksum over the pseudo-header");
    byte[] reply = request.clone();
    reply[0] = (byte) IcmpPacket.ECHO6_REPLY;
    reply[2] = 0x5a; // whatever the peer computed: the kernel has checked it
    assertEquals(new IcmpPacket.Reply(7, 9, 42L, 0x00070009), IcmpPacket.parseReply6(reply, reply.length));
    assertNull(IcmpPacket.parseReply6(request, request.length), "our own request, seen on a raw socket over loopback");
    assertNull(IcmpPacket.parseReply6(reply, 10), "short");
    assertNull(IcmpPacket.parseReply(reply, reply.length, false), "an ICMPv6 reply is no ICMPv4 one");
  }

  @Test
  void anIpv6SocketAddressCarriesTheAddressAtByte8AndTheScopeAtByte24() {
    byte[] a = new byte[16];
    a[15] = 1; // ::1
    byte[] sa = IcmpNative.sockaddr6(a, 3);
    assertEquals(28, sa.length);
    assertEquals(IcmpNative.AF_INET6, sa[0]);
    assertEquals(1, sa[23]);
    assertEquals(3, sa[24]);
  }
}
