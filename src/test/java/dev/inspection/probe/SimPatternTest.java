package dev.inspection.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.inventory.CheckSpec;
import dev.inspection.inventory.Device;
import dev.inspection.inventory.Inventory;
import dev.inspection.state.AlertEvent;
import dev.inspection.state.AlertRules;
import dev.inspection.state.Check;
import dev.inspection.state.DerivedState;
import dev.inspection.state.DeviceFold;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SimPatternTest {
  @Test
  void aFlappingDeviceAlternatesForFortyChecksThenStaysUpForForty() {
    StringBuilder s = new StringBuilder();
    for (int n = 0; n < 84; n++) s.append(SimPattern.flapUp(n) ? 'U' : 'D');
    assertEquals("UD".repeat(20) + "U".repeat(40) + "UDUD", s.toString());
  }

  @Test
  void throughTheDeviceFoldAFlappingAlertStartsAndResolvesInEveryPeriod() {
    AlertRules rules = AlertRules.forPriority(2);
    DerivedState state = DerivedState.initial();
    List<AlertEvent> flapping = new ArrayList<>();
    Instant t = Instant.parse("2026-12-02T10:00:00Z");
    for (int n = 0; n < 160; n++) {
      boolean up = SimPattern.flapUp(n);
      Check c = new Check("sim-000100", 1 + n / 10, n + 1, t.plusSeconds(10L * n), up, new JsonObject().put("status", up ? "UP" : "DOWN"));
      DeviceFold.Result r = DeviceFold.apply(state, c, rules);
      state = r.next();
      r.events().stream().filter(e -> e.alertKey().equals(DeviceFold.FLAPPING)).forEach(flapping::add);
    }
    assertEquals(List.of(AlertEvent.FIRING, AlertEvent.RESOLVED, AlertEvent.FIRING, AlertEvent.RESOLVED),
        flapping.stream().map(AlertEvent::type).toList(), flapping.toString());
    assertTrue(flapping.get(0).seq() <= 10, "flapping is noticed within the first ten checks");
  }

  @Test
  void theSimulatedFleetFlapsTheGivenPercentSpreadEvenly() {
    List<Device> fleet = Inventory.simulated(10_000, "default", 10_000, 1);
    List<Device> flapping = fleet.stream().filter(d -> "flap".equals(d.checkSpec().getString("pattern"))).toList();
    assertEquals(100, flapping.size());
    assertEquals("sim-000100", flapping.get(0).deviceId());
    assertEquals(0, Inventory.simulated(1000, "default", 10_000, 0).stream().filter(d -> !d.checkSpec().isEmpty()).count());
    fleet.forEach(d -> CheckSpec.validate("sim", d.checkSpec()));
  }

  @Test
  void anUnknownPatternIsRefusedNamingTheField() {
    IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
        () -> CheckSpec.validate("sim", new JsonObject().put("pattern", "wobble")));
    assertTrue(e.getMessage().startsWith("check_spec.pattern"), e.getMessage());
  }
}
