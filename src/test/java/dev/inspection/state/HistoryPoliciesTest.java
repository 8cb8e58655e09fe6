package dev.inspection.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import org.junit.jupiter.api.Test;

class HistoryPoliciesTest {
  @Test
  void aDefaultAndOverridesByProfile() {
    HistoryPolicies p = HistoryPolicies.parse("every", " hotel_room = changes ", 60_000, "latency_ms, rtt");
    assertEquals(HistoryPolicy.Kind.EVERY, p.forProfile("default").kind());
    assertEquals(HistoryPolicy.Kind.CHANGES, p.forProfile("hotel_room").kind());
    assertEquals(Set.of("latency_ms", "rtt"), p.forProfile("hotel_room").ignoredFields());
    assertEquals(Duration.ofMinutes(1), p.forProfile("default").heartbeat());
    assertTrue(p.forProfile("default").keeps(false), "every keeps unchanged results");
    assertFalse(p.forProfile("hotel_room").keeps(false));
  }

  @Test
  void wrongWordsAreRefusedWithWhatIsWrong() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> HistoryPolicies.parse("some", "", 1, "")).getMessage().contains("'some'"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> HistoryPolicies.parse("every", "nosuch=changes", 1, "")).getMessage()
        .contains("known profiles"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> HistoryPolicies.parse("every", "hotel_room", 1, "")).getMessage()
        .contains("profile=policy"));
    assertThrows(IllegalArgumentException.class, () -> HistoryPolicies.parse("every", "", 0, ""));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> HistoryPolicies.parse("every", "", 1, "status")).getMessage().contains("status"));
  }

  @Test
  void theMarkKeepsTheFirstResultChangesAndHeartbeatsAndNeverAResultNotNewer() {
    Duration hb = Duration.ofSeconds(60);
    Instant t = Instant.parse("2026-12-01T00:00:00Z");
    HistoryMark.Step s1 = HistoryMark.step(null, new DerivedState.Position(1, 1), t, 7, hb);
    assertTrue(s1.changed());
    HistoryMark.Step s2 = HistoryMark.step(s1.next(), new DerivedState.Position(1, 2), t.plusSeconds(59), 7, hb);
    assertFalse(s2.changed());
    assertEquals(t, s2.next().keptAt());
    HistoryMark.Step s3 = HistoryMark.step(s2.next(), new DerivedState.Position(1, 3), t.plusSeconds(60), 7, hb);
    assertTrue(s3.changed(), "a heartbeat");
    HistoryMark.Step s4 = HistoryMark.step(s3.next(), new DerivedState.Position(1, 4), t.plusSeconds(61), 8, hb);
    assertTrue(s4.changed(), "a new digest");
    HistoryMark.Step late = HistoryMark.step(s4.next(), new DerivedState.Position(1, 3), t.plusSeconds(500), 9, hb);
    assertFalse(late.changed());
    assertEquals(s4.next(), late.next(), "a result not newer leaves the mark");
  }
}
