package dev.inspection.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ConsoleSessionsTest {
  private static final Principal OP = new Principal("operator", Principal.Access.OPERATOR, null);

  @Test
  void aSessionUnusedForTheIdleTimeEndsAndUseKeepsItAlive() {
    AtomicLong now = new AtomicLong(0);
    ConsoleSessions s = new ConsoleSessions(10, 1000, now::get);
    String id = s.open(OP);
    now.set(900);
    assertEquals(OP, s.lookup(id), "used within the idle time");
    now.set(1800);
    assertEquals(OP, s.lookup(id), "the last use restarted its clock");
    now.set(2801);
    assertNull(s.lookup(id), "idle for longer than console.session.idle.ms");
    assertEquals(0, s.size());
    assertNull(s.lookup("forged"));
    assertNull(s.lookup(null));
    assertEquals(0, s.size(), "looking up never creates a session");
  }

  @Test
  void atMostMaxLiveSessionsAndIdleOnesMakeRoom() {
    AtomicLong now = new AtomicLong(0);
    ConsoleSessions s = new ConsoleSessions(2, 1000, now::get);
    String a = s.open(OP);
    String b = s.open(OP);
    assertNotNull(a);
    assertNotEquals(a, b);
    assertNull(s.open(OP), "the cap is reached");
    s.close(a);
    assertNotNull(s.open(OP), "a logout makes room");
    assertNull(s.open(OP));
    now.set(5000);
    assertNotNull(s.open(OP), "idle sessions are forgotten when room is needed");
    assertEquals(1, s.size());
  }
}
