package dev.inspection.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.inspection.scheduler.SlotWeight.Coefficients;
import org.junit.jupiter.api.Test;

class SlotWeightTest {
  private static final double EPS = 1e-9;

  @Test
  void defaultsAreTheSeedCoefficients() {
    assertEquals(new Coefficients(1, 5, 10, 2, 3), Coefficients.defaults());
  }

  @Test
  void weightIsTheLinearSumWithTheDefaults() {
    // 1*10 devices + 5*2 msg/s + 10*3 queued + 2*4.5 ms + 3*2 critical
    assertEquals(10 + 10 + 30 + 9 + 6, SlotWeight.weight(Coefficients.defaults(), 10, 2.0, 3, 4.5, 2), EPS);
  }

  @Test
  void eachCoefficientScalesOnlyItsOwnTerm() {
    assertEquals(7 * 3, SlotWeight.weight(new Coefficients(7, 0, 0, 0, 0), 3, 100, 100, 100, 100), EPS);
    assertEquals(7 * 3, SlotWeight.weight(new Coefficients(0, 7, 0, 0, 0), 100, 3, 100, 100, 100), EPS);
    assertEquals(7 * 3, SlotWeight.weight(new Coefficients(0, 0, 7, 0, 0), 100, 100, 3, 100, 100), EPS);
    assertEquals(7 * 3, SlotWeight.weight(new Coefficients(0, 0, 0, 7, 0), 100, 100, 100, 3, 100), EPS);
    assertEquals(7 * 3, SlotWeight.weight(new Coefficients(0, 0, 0, 0, 7), 100, 100, 100, 100, 3), EPS);
  }

  @Test
  void anEmptyIdleSlotStillWeighsOneUnit() {
    assertEquals(1.0, SlotWeight.weight(Coefficients.defaults(), 0, 0, 0, 0, 0), EPS);
  }

  @Test
  void aSumBelowOneIsRaisedToOneButASumAboveIsKept() {
    Coefficients tenth = new Coefficients(0.1, 0, 0, 0, 0);
    assertEquals(1.0, SlotWeight.weight(tenth, 5, 0, 0, 0, 0), EPS);
    assertEquals(1.5, SlotWeight.weight(tenth, 15, 0, 0, 0, 0), EPS);
  }

  @Test
  void aNegativeOrNanReadingCountsAsZero() {
    Coefficients c = Coefficients.defaults();
    assertEquals(10, SlotWeight.weight(c, 10, -3.0, -1, Double.NaN, 0), EPS);
  }

  @Test
  void negativeOrNanCoefficientsAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> new Coefficients(-1, 5, 10, 2, 3));
    assertThrows(IllegalArgumentException.class, () -> new Coefficients(1, 5, Double.NaN, 2, 3));
    assertThrows(IllegalArgumentException.class, () -> new Coefficients(1, 5, 10, 2, Double.POSITIVE_INFINITY));
  }
}
