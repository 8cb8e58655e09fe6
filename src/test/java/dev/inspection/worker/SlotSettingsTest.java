package dev.inspection.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.state.SnapshotLayout;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SlotSettingsTest {
  @Test
  void theSnapshotLayoutIsCompactUnlessSetToV1AndAnyOtherValueStopsStartUpNamingTheKey() {
    assertEquals(SnapshotLayout.COMPACT, SlotSettings.from(Config.of(Map.of())).layout());
    assertEquals(SnapshotLayout.V1, SlotSettings.from(Config.of(Map.of("worker.snapshot.layout", "v1"))).layout());
    ConfigException e = assertThrows(ConfigException.class, () -> SlotSettings.from(Config.of(Map.of("worker.snapshot.layout", "small"))));
    assertTrue(e.getMessage().contains("worker.snapshot.layout") && e.getMessage().contains("'small'"), e.getMessage());
  }
}
