package dev.inspection.state;

import static dev.inspection.state.CheckStatus.DOWN;
import static dev.inspection.state.CheckStatus.UP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class FlapRingTest {

  /** What the fold did before: a growable copy, the status appended, the oldest dropped beyond the window. */
  private static List<CheckStatus> reference(List<CheckStatus> ring, CheckStatus status, int window) {
    List<CheckStatus> next = new ArrayList<>(ring);
    next.add(status);
    while (next.size() > window) next.remove(0);
    return next;
  }

  @Test
  void appendingAgreesWithAPlainListOverLongRandomSeriesForEveryWindow() {
    Random rnd = new Random(11);
    for (int window : new int[] {1, 2, 3, 7, 21, 63, 64, 65, 100}) {
      List<CheckStatus> ring = FlapRing.of(List.of());
      List<CheckStatus> plain = new ArrayList<>();
      for (int k = 0; k < 500; k++) {
        CheckStatus s = rnd.nextInt(4) == 0 ? DOWN : UP;
        ring = FlapRing.plus(ring, s, window);
        plain = reference(plain, s, window);
        assertEquals(plain, ring, "window " + window + ", result " + k);
        assertEquals(ring, plain, "and the other way round");
        assertEquals(plain.hashCode(), ring.hashCode(), "window " + window + ", result " + k);
        assertEquals(plain.toString(), ring.toString());
      }
      if (window <= FlapRing.MAX) assertInstanceOf(FlapRing.class, ring, "a window of " + window + " is held as bits");
    }
  }

  @Test
  void aRingLongerThanTheWindowLosesItsOldestAsBefore() {
    List<CheckStatus> eight = FlapRing.of(List.of(DOWN, DOWN, UP, UP, DOWN, UP, UP, DOWN));
    // the window lowered to 3 (a configuration change): the two newest are kept, then the new one
    assertEquals(List.of(UP, DOWN, DOWN), FlapRing.plus(eight, DOWN, 3));
    assertEquals(List.of(UP), FlapRing.plus(eight, UP, 1));
    List<CheckStatus> downs = new ArrayList<>();
    for (int i = 0; i < 64; i++) downs.add(DOWN);
    assertEquals(List.of(UP), FlapRing.plus(FlapRing.of(downs), UP, 1), "all 64 dropped");
    assertEquals(List.of(DOWN, UP), FlapRing.plus(FlapRing.of(downs), UP, 2));
  }

  @Test
  void aRingIsImmutableAndRefusesWhatAListOfStatusesCannotHold() {
    List<CheckStatus> ring = FlapRing.of(List.of(UP, DOWN));
    assertThrows(UnsupportedOperationException.class, () -> ring.add(UP));
    assertThrows(UnsupportedOperationException.class, () -> ring.set(0, DOWN));
    assertThrows(IndexOutOfBoundsException.class, () -> ring.get(2));
    assertThrows(IndexOutOfBoundsException.class, () -> ring.get(-1));
    assertThrows(NullPointerException.class, () -> FlapRing.of(Arrays.asList(UP, null)));
    assertThrows(NullPointerException.class, () -> FlapRing.plus(ring, null, 21));
  }

  @Test
  void sixtyFourResultsAreBitsAndMoreAreAPlainList() {
    List<CheckStatus> sixtyFour = new ArrayList<>();
    for (int i = 0; i < 64; i++) sixtyFour.add(i % 3 == 0 ? DOWN : UP);
    assertInstanceOf(FlapRing.class, FlapRing.of(sixtyFour));
    assertEquals(sixtyFour, FlapRing.of(sixtyFour));
    assertEquals(DOWN, FlapRing.of(sixtyFour).get(63));
    List<CheckStatus> more = new ArrayList<>(sixtyFour);
    more.add(DOWN);
    List<CheckStatus> plain = FlapRing.of(more);
    assertEquals(more, plain);
    assertThrows(UnsupportedOperationException.class, () -> plain.add(UP), "still immutable");
  }

  @Test
  void ringsOfTheSameStatusesAreEqualAndOthersAreNot() {
    assertEquals(FlapRing.of(List.of(UP, DOWN, UP)), FlapRing.of(new ArrayList<>(List.of(UP, DOWN, UP))));
    assertNotEquals(FlapRing.of(List.of(UP, DOWN, UP)), FlapRing.of(List.of(UP, DOWN)));
    assertNotEquals(FlapRing.of(List.of(UP, UP)), FlapRing.of(List.of(UP, DOWN)));
    assertNotEquals(FlapRing.of(List.of(UP)), FlapRing.of(List.of()), "an UP is not nothing, though both are no bits");
    assertEquals(List.of(), FlapRing.of(List.of()));
  }
}
