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
    Outcome shrink = ReshardPlan.schedule(List.of(V1), 32, T0, SEED_DEFAULTS);
    assertEquals(501, shrink.refused().status(), "fewer slots is not built (the retired queues' drain)");
    assertTrue(shrink.refused().message().contains("can only grow"), shrink.refused().message());
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
