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
}
