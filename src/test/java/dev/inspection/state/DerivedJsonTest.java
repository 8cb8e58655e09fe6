package dev.inspection.state;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class DerivedJsonTest {

  private static void assertSameText(DerivedState s) {
    String direct = DerivedJson.encode(s);
    assertEquals(s.toJson().encode(), direct);
    assertEquals(s, DerivedState.fromJson(new JsonObject(direct)));
  }

  @Test
  void everyStateOfLongRandomSeriesIsWrittenAsTheJsonTreeWouldBe() {
    Random random = new Random(11);
    int states = 0;
    for (int priority = 1; priority <= 3; priority++) {
      AlertRules rules = AlertRules.forPriority(priority);
      StringBuilder pattern = new StringBuilder();
      for (int i = 0; i < 400; i++) pattern.append(random.nextInt(100) < (i % 100 < 50 ? 10 : 45) ? 'D' : 'U');
      // odd steps so that instants carry millis, micros and nanos, not only whole seconds
      Duration step = Duration.ofSeconds(37).plusNanos(random.nextInt(3) == 0 ? 123_000_000 : 4_567L + random.nextInt(1000));
      DerivedState s = DerivedState.initial();
      assertSameText(s);
      HistoryMark mark = null;
      for (Check c : Checks.series("dev-" + priority, pattern.toString(), Checks.T0, step, 0)) {
        s = DeviceFold.apply(s, c, rules).next();
        // the mark keeps milliseconds (its snapshot form), so it is given milliseconds
        mark = HistoryMark.step(mark, new DerivedState.Position(c.cycleId(), c.seq()), c.collectedAt().truncatedTo(ChronoUnit.MILLIS),
            random.nextLong(), Duration.ofMinutes(5)).next();
        s = s.withHistory(mark);
        assertSameText(s);
        states++;
      }
    }
    assertEquals(1200, states);
  }

  @Test
  void alertKeysThatNeedEscapingAreEscapedAsTheTreeEscapesThem() {
    TreeMap<String, Integer> firing = new TreeMap<>();
    firing.put("custom.\"quoted\"", 2);
    firing.put("tab\there", 1);
    firing.put("back\\slash\u0001", 4);
    firing.put("unicode.é€", 3);
    DerivedState s = new DerivedState(0, List.of(CheckStatus.UP), Instant.parse("2026-01-02T03:04:05Z"), null, OfflinePhase.UP, null, null,
        false, new DerivedState.Position(5, 6), firing, null);
    assertSameText(s);
  }
}
