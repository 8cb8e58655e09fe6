package dev.inspection.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PacingTest {
  @ParameterizedTest(name = "{0} active of min 3 -> {1}")
  @CsvSource({"0, 0.25", "1, 0.5", "2, 0.75", "3, 1.0", "4, 1.0"})
  void coldStartOpensAQuarterPerActiveWorkerUntilTheMinimum(int active, double expected) {
    assertEquals(expected, Pacing.factor(active, 3), 1e-12);
  }

  @Test
  void noMinimumMeansFullRate() {
    assertEquals(1.0, Pacing.factor(0, 0), 1e-12);
    assertEquals(1.0, Pacing.factor(0, -2), 1e-12);
  }

  @Test
  void factorNeverExceedsOneBelowALargeMinimum() {
    assertEquals(1.0, Pacing.factor(5, 10), 1e-12);
    assertEquals(0.25, Pacing.factor(-1, 10), 1e-12, "a negative count is treated as none");
  }

  @Test
  void criticalDevicesKeepTheirIntervalDuringAColdStart() {
    assertEquals(10_000, Pacing.intervalMs(10_000, 1, Pacing.factor(0, 3)));
  }

  @Test
  void otherDevicesAreStretchedByTheFactor() {
    assertEquals(40_000, Pacing.intervalMs(10_000, 2, Pacing.factor(0, 3)));
    assertEquals(20_000, Pacing.intervalMs(10_000, 3, Pacing.factor(1, 3)));
    assertEquals(10_000, Pacing.intervalMs(10_000, 2, Pacing.factor(3, 3)));
  }

  @Test
  void stretchedIntervalsAreRoundedToTheNearestMillisecond() {
    assertEquals(7, Pacing.intervalMs(5, 2, 0.75)); // 6.67
    assertEquals(13_333, Pacing.intervalMs(10_000, 2, 0.75)); // 13333.33
  }

  @Test
  void aFactorOfZeroIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> Pacing.intervalMs(10_000, 2, 0));
    assertThrows(IllegalArgumentException.class, () -> Pacing.intervalMs(10_000, 2, Double.NaN));
  }
}
