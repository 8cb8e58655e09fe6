package dev.inspection.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

class ShedReporterTest {

  @Test
  void aReportCarriesTheProbeAndEachLedgerLinesRunningCount() {
    JsonObject m = ShedReporter.message("probe-1", List.of(new OutboxShed.Entry("d1", 120_000, 3, 7), new OutboxShed.Entry("d2", 180_000, 2, 1)));
    assertEquals("shed/1", m.getString("schema"));
    assertEquals("probe-1", m.getString("probe_id"));
    assertEquals(new JsonObject().put("device_id", "d1").put("minute", 120_000L).put("priority", 3).put("count", 7L), m.getJsonArray("entries").getJsonObject(0));
    assertEquals(2, m.getJsonArray("entries").size());
  }
}
