package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.state.AlertRules;
import dev.inspection.state.PayloadProfiles;
import dev.inspection.worker.BatchStore.Part;
import dev.inspection.worker.StatePlanner.Plan;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PoisonSplitTest {
  /** A slot's part: each device with {@code perDevice} results, every third DOWN (so the fold has derived state to carry). */
  static Part part(int slot, List<String> devices, int perDevice) {
    List<Envelope> batch = new ArrayList<>();
    Map<String, DeviceDirectory.Info> infos = new HashMap<>();
    for (String d : devices) {
      infos.put(d, new DeviceDirectory.Info(1, PayloadProfiles.DEFAULT, false));
      for (int s = 1; s <= perDevice; s++) {
        long cycle = 1_000 + s;
        batch.add(new Envelope(Envelope.messageId("n", cycle, d, s), d, slot, 1, 1, 1, "n", cycle, s, Instant.ofEpochMilli(cycle), Priority.NORMAL,
            new JsonObject().put("status", "DOWN")));
      }
    }
    return new Part(slot, 7, StatePlanner.plan(batch, Map.of(), infos, AlertRules::forPriority));
  }

  static List<String> devices(String prefix, int n) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) out.add(prefix + i);
    return out;
  }

  @Test
  void aGroupOfSeveralSlotsIsHalvedBySlot() {
    List<Part> group = List.of(part(1, devices("a", 2), 1), part(2, devices("b", 2), 1), part(3, devices("c", 2), 1));
    List<List<Part>> h = PoisonSplit.halves(group);
    assertEquals(List.of(1), h.get(0).stream().map(Part::slot).toList());
    assertEquals(List.of(2, 3), h.get(1).stream().map(Part::slot).toList());
    assertTrue(h.get(0).get(0) == group.get(0), "a slot's part goes on whole while slots are being halved");
  }

  @Test
  void oneSlotIsHalvedByDeviceKeepingTheSlotAndEpoch() {
    Part p = part(4, devices("d", 5), 2);
    List<List<Part>> h = PoisonSplit.halves(List.of(p));
    assertEquals(2, h.size());
    Part first = h.get(0).get(0);
    Part second = h.get(1).get(0);
    assertEquals(Set.of("d0", "d1"), PoisonSplit.devices(first.plan()));
    assertEquals(Set.of("d2", "d3", "d4"), PoisonSplit.devices(second.plan()));
    assertEquals(4, first.slot());
    assertEquals(7, second.epoch());
    assertEquals(4, first.size(), "both results of each of its two devices go to history");
    assertEquals(6, second.size());
  }

  @Test
  void oneDeviceOfOneSlotCannotBeSplitFurther() {
    assertEquals(List.of(), PoisonSplit.halves(List.of(part(4, List.of("only"), 3))));
  }

  @Test
  void aPlanCutToSomeDevicesKeepsEveryRowOfThemAndNothingOfTheOthers() {
    Plan plan = part(0, devices("e", 4), 3).plan();
    assertTrue(!plan.events().isEmpty(), "three DOWNs in a row fire an offline alert for a critical device");
    Plan two = PoisonSplit.only(plan, List.of("e1", "e3"));
    assertEquals(Set.of("e1", "e3"), PoisonSplit.devices(two));
    assertEquals(6, two.history().size());
    assertTrue(two.history().stream().allMatch(h -> Set.of("e1", "e3").contains(h.envelope().deviceId())));
    assertTrue(two.events().stream().allMatch(e -> Set.of("e1", "e3").contains(e.deviceId())));
    assertEquals(plan.events().stream().filter(e -> Set.of("e1", "e3").contains(e.deviceId())).count(), two.events().size());
    assertEquals(Set.of("e1", "e3"), two.next().keySet());

    Plan rest = PoisonSplit.without(plan, Set.of("e1"));
    assertEquals(Set.of("e0", "e2", "e3"), PoisonSplit.devices(rest));
    assertEquals(9, rest.history().size());
    assertEquals(Set.of("e0", "e2", "e3"), rest.next().keySet(), "a refused device's derived state is not taken over: it was not written");
    assertTrue(PoisonSplit.without(plan, Set.of()) == plan);
  }
}
