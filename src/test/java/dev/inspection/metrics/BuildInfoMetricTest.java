package dev.inspection.metrics;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BuildInfoMetricTest {
  @Test
  void buildInfoIsScrapedUnderItsOwnNameWithVersionAndCommit() {
    Metrics m = Metrics.prometheus();
    m.buildInfo("1.2.0", "0123456789ab");
    String scrape = m.scrape();
    assertTrue(scrape.lines().anyMatch(l -> l.equals("build_info{commit=\"0123456789ab\",version=\"1.2.0\"} 1")), scrape);
  }
}
