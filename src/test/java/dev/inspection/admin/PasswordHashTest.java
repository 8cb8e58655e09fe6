package dev.inspection.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PasswordHashTest {
  @Test
  void aHashMatchesItsPasswordOnlyAndSurvivesItsEncoding() {
    PasswordHash h = PasswordHash.of("correct horse battery");
    assertTrue(h.matches("correct horse battery"));
    assertFalse(h.matches("correct horse batterY"));
    assertFalse(h.matches(null));
    String enc = h.encoded();
    assertTrue(enc.startsWith("pbkdf2$" + PasswordHash.ITERATIONS + "$"), enc);
    assertFalse(enc.contains("correct"), enc);
    assertTrue(PasswordHash.parse(enc).matches("correct horse battery"));
    assertNotEquals(enc, PasswordHash.of("correct horse battery").encoded(), "a random salt each time");
  }

  @Test
  void aMalformedOrWeakEncodingIsRefusedWithoutEchoingIt() {
    for (String bad : new String[] {"pbkdf2$x$AAAA$BBBB", "pbkdf2$1000$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2g", "pbkdf2$300000$!!$??", "pbkdf2$1$2"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PasswordHash.parse(bad), bad);
      assertFalse(e.getMessage().contains(bad), e.getMessage());
    }
    assertEquals("has fewer than 10000 iterations",
        assertThrows(IllegalArgumentException.class, () -> PasswordHash.parse("pbkdf2$1000$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2g")).getMessage());
  }
}
