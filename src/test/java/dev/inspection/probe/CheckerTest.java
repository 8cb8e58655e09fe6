package dev.inspection.probe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class CheckerTest {
  @Test
  void anAddressWrittenOutIsReadWithoutTheResolver() {
    assertArrayEquals(new byte[] {127, 0, 0, 1}, Checker.literal("127.0.0.1").getAddress());
    assertArrayEquals(new byte[] {10, (byte) 255, 0, 7}, Checker.literal("10.255.0.7").getAddress());
    assertEquals(16, Checker.literal("::1").getAddress().length);
  }

  @Test
  void namesAndNearAddressesGoToTheResolver() {
    assertNull(Checker.literal("db-1.example.net"));
    assertNull(Checker.literal("256.1.1.1"), "an octet above 255");
    assertNull(Checker.literal("10.0.0"), "three parts");
    assertNull(Checker.literal("10.0.0.1."), "a trailing dot");
    assertNull(Checker.literal("1e1.0.0.1"));
    assertNull(Checker.literal("fe80::zz"), "not an IPv6 address: the resolver reports it");
  }
}
