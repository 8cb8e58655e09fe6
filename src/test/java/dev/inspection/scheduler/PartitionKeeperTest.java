package dev.inspection.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.LocalDate;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PartitionKeeperTest {
  private static final LocalDate TODAY = LocalDate.of(2026, 11, 30);
  private static final List<PartitionKeeper.Parent> PARENTS = List.of(new PartitionKeeper.Parent("h_c1", true, 30),
      new PartitionKeeper.Parent("rollup", false, 90));

  @Test
  void createsYesterdayTodayAndTheDaysAheadThatAreMissing() {
    PartitionKeeper.Plan p = PartitionKeeper.plan(PARENTS, Set.of("h_c1_20261130"), TODAY, 2);
    assertEquals(7, p.create().size(), p.create().toString()); // h_c1: 29, 01, 02 (30 exists); rollup: 29, 30, 01, 02
    assertTrue(p.create().contains("CREATE TABLE h_c1_20261202 PARTITION OF h_c1 FOR VALUES FROM (1796169600000) TO (1796256000000)"), p.create().toString());
    assertTrue(p.create().stream().anyMatch(s -> s.startsWith("CREATE TABLE rollup_20261129 PARTITION OF rollup FOR VALUES FROM ('2026-11-29T00:00Z')")));
    assertTrue(p.drop().isEmpty());
  }

  @Test
  void dropsOnlyWholeDaysPastTheParentsRetentionAndNeverTheDefault() {
    Set<String> existing = Set.of("h_c1_20261030", "h_c1_20261031", "h_c1_20261129", "h_c1_default", "rollup_20261030", "rollup_20260831");
    PartitionKeeper.Plan p = PartitionKeeper.plan(PARENTS, existing, TODAY, 0);
    // 30 days of h_c1 keep 2026-10-31 and later; 90 days of rollups keep 2026-09-01 and later
    assertEquals(List.of("DROP TABLE h_c1_20261030", "DROP TABLE rollup_20260831"), p.drop());
  }

  @Test
  void aPartitionOfAnotherTableWithTheSamePrefixIsNotTouched() {
    PartitionKeeper.Plan p = PartitionKeeper.plan(List.of(new PartitionKeeper.Parent("h", true, 7)), Set.of("h_c1_20200101"), TODAY, 0);
    assertTrue(p.drop().isEmpty(), p.drop().toString());
  }
}
