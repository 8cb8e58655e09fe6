package dev.inspection.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.scheduler.ReshardPlan.MapVersion;
import dev.inspection.scheduler.ReshardPlan.Outcome;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReshardPlanTest {
  private static final Instant T0 = Instant.parse("2026-12-02T10:00:00Z");
  private static final ReshardPlan.Settings SEED_DEFAULTS = new ReshardPlan.Settings(Duration.ofMinutes(5), Duration.ofMinutes(10));
  private static final MapVersion V1 = new MapVersion(1, 64, T0.minusSeconds(86_400), null);

  @Test
  void aReshardIsScheduledAsTheNextVersionEffectiveInFiveMinutesWithItsWindowEndingInTen() {
    Outcome o = ReshardPlan.schedule(List.of(V1), 128, T0, SEED_DEFAULTS);
    assertNull(o.refused());
    assertEquals(new MapVersion(2, 128, T0.plus(Duration.ofMinutes(5)), T0.plus(Duration.ofMinutes(10))), o.scheduled());
  }

  @Test
  void aSecondReshardIsRefusedWhileTheFirstIsPendingOrInItsWindow() {
    MapVersion v2 = new MapVersion(2, 128, T0.plusSeconds(300), T0.plusSeconds(600));
    Outcome pending = ReshardPlan.schedule(List.of(V1, v2), 256, T0, SEED_DEFAULTS);
    assertEquals(409, pending.refused().status());
    assertTrue(pending.refused().message().contains("version 2"), pending.refused().message());
    assertEquals(409, ReshardPlan.schedule(List.of(V1, v2), 256, T0.plusSeconds(450), SEED_DEFAULTS).refused().status(), "in the window");
    Outcome after = ReshardPlan.schedule(List.of(V1, v2), 256, T0.plusSeconds(600), SEED_DEFAULTS);
    assertNull(after.refused(), "the window is over");
    assertEquals(3, after.scheduled().version());
  }

  @Test
  void theCurrentCountAndCountsOutOfRangeAreRefused() {
    assertEquals(409, ReshardPlan.schedule(List.of(V1), 64, T0, SEED_DEFAULTS).refused().status());
    assertEquals(400, ReshardPlan.schedule(List.of(V1), 0, T0, SEED_DEFAULTS).refused().status());
    assertEquals(400, ReshardPlan.schedule(List.of(V1), 4097, T0, SEED_DEFAULTS).refused().status());
    assertNull(ReshardPlan.schedule(List.of(V1), 4096, T0, SEED_DEFAULTS).refused());
    assertEquals(409, ReshardPlan.schedule(List.of(), 128, T0, SEED_DEFAULTS).refused().status(), "no map seeded yet");
  }

  @Test
  void aShrinkIsScheduledAndTheNextReshardWaitsUntilItsSlotsAreRetired() {
    Outcome shrink = ReshardPlan.schedule(List.of(V1), 32, T0, SEED_DEFAULTS);
    assertNull(shrink.refused());
    MapVersion v2 = shrink.scheduled();
    assertEquals(32, v2.totalSlots());
    Instant after = T0.plusSeconds(601);
    Outcome next = ReshardPlan.schedule(List.of(V1, v2), 48, after, SEED_DEFAULTS);
    assertEquals(409, next.refused().status(), "slots 32 .. 63 are not retired yet");
    assertTrue(next.refused().message().contains("slots 32 .. 63"), next.refused().message());
    JsonObject status = ReshardPlan.status(List.of(V1, v2), after);
    assertEquals("RETIRING", status.getJsonObject("change").getString("state"), "the console shows the retirement");
    assertEquals(0, status.getJsonObject("change").getLong("window_ends_in_ms"));

    MapVersion retired = new MapVersion(2, 32, v2.effectiveAt(), v2.windowUntil(), after);
    assertNull(ReshardPlan.status(List.of(V1, retired), after).getJsonObject("change"), "retired: nothing in progress");
    assertNull(ReshardPlan.schedule(List.of(V1, retired), 48, after, SEED_DEFAULTS).refused());
    // growing back after a shrink has nothing to retire
    MapVersion v3 = new MapVersion(3, 48, after, after.plusSeconds(10));
    assertNull(ReshardPlan.schedule(List.of(V1, retired, v3), 64, after.plusSeconds(10), SEED_DEFAULTS).refused(),
        "48 is fewer than version 1's 64, but more than version 2's 32: nothing to retire");
    assertEquals("IN_FORCE", ReshardPlan.status(List.of(V1, retired, v3), after.plusSeconds(10)).getJsonObject("current").getString("state"));
  }

  @Test
  void theStatusCountsDownToTheEffectiveTimeThenToTheEndOfTheWindow() {
    MapVersion v2 = new MapVersion(2, 128, T0.plusSeconds(300), T0.plusSeconds(600));
    JsonObject before = ReshardPlan.status(List.of(V1, v2), T0.plusSeconds(60));
    assertEquals(1, before.getJsonObject("current").getLong("version"));
    JsonObject change = before.getJsonObject("change");
    assertEquals("PENDING", change.getString("state"));
    assertEquals(64, change.getInteger("from_slots"));
    assertEquals(240_000, change.getLong("effective_in_ms"));
    assertEquals(540_000, change.getLong("window_ends_in_ms"));
    assertEquals(List.of(2L, 1L), before.getJsonArray("versions").stream().map(v -> ((JsonObject) v).getLong("version")).toList());

    JsonObject during = ReshardPlan.status(List.of(V1, v2), T0.plusSeconds(400));
    assertEquals(2, during.getJsonObject("current").getLong("version"));
    assertEquals("IN_WINDOW", during.getJsonObject("change").getString("state"));
    assertEquals(0, during.getJsonObject("change").getLong("effective_in_ms"));

    JsonObject done = ReshardPlan.status(List.of(V1, v2), T0.plusSeconds(600));
    assertNull(done.getJsonObject("change"));
    assertEquals("IN_FORCE", done.getJsonObject("current").getString("state"));
  }
}
