package dev.inspection.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.it.Ledger.Produced;
import dev.inspection.it.Ledger.Stored;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The judge is tested with histories that have planted anomalies. */
class LedgerTest {
  private static final List<Produced> PRODUCED = List.of(
      new Produced("p:1:a:1", "a", 1, 1), new Produced("p:1:a:2", "a", 1, 2), new Produced("p:1:b:1", "b", 1, 1));

  @Test
  void cleanHistoryIsClean() {
    var r = Ledger.check(PRODUCED,
        List.of(new Stored("p:1:a:1", "a", 1, 1), new Stored("p:1:a:2", "a", 1, 2), new Stored("p:1:b:1", "b", 1, 1)),
        List.of(new Stored("p:1:a:2", "a", 1, 2), new Stored("p:1:b:1", "b", 1, 1)));
    assertTrue(r.clean(), r.toString());
  }

  @Test
  void plantedLossDuplicateUnexpectedAndStaleAreAllCounted() {
    var r = Ledger.check(PRODUCED,
        List.of(new Stored("p:1:a:1", "a", 1, 1), new Stored("p:1:a:2", "a", 1, 2), new Stored("p:1:a:2", "a", 1, 2),
            new Stored("x:9:z:1", "z", 9, 1)),
        List.of(new Stored("p:1:a:1", "a", 1, 1), new Stored("x:9:z:1", "z", 9, 1)));
    assertEquals(List.of("p:1:b:1"), r.lost());
    assertEquals(List.of("p:1:a:2"), r.duplicated());
    assertEquals(List.of("x:9:z:1"), r.unexpected());
    assertEquals(1, r.stale().size(), r.toString()); // a's current is seq 1 while seq 2 is stored
  }

  @Test
  void aShedResultThatNeverArrivedIsShedNotLostAndOneThatArrivedAnywayIsStored() {
    var produced = List.of(new Produced("p:1:a:1", "a", 1, 1, true), new Produced("p:1:a:2", "a", 1, 2, true), new Produced("p:1:b:1", "b", 1, 1));
    var r = Ledger.check(produced,
        List.of(new Stored("p:1:a:2", "a", 1, 2), new Stored("p:1:b:1", "b", 1, 1)),
        List.of(new Stored("p:1:a:2", "a", 1, 2), new Stored("p:1:b:1", "b", 1, 1)));
    assertTrue(r.clean(), r.toString());
    assertEquals(List.of("p:1:a:1"), r.shed());
    // a shed flag never hides a loss of another result
    var lossy = Ledger.check(produced, List.of(new Stored("p:1:a:2", "a", 1, 2)), List.of(new Stored("p:1:a:2", "a", 1, 2)));
    assertEquals(List.of("p:1:b:1"), lossy.lost());
  }
}
