package dev.inspection.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LegacyBaselineTest {
  private static final List<LegacyBaseline.File> FILES = List.of(new LegacyBaseline.File("V001", "a"), new LegacyBaseline.File("V002", "b"),
      new LegacyBaseline.File("V003", "c"));

  @Test
  void emptyOldTableMeansNoBaseline() {
    assertNull(LegacyBaseline.baselineVersion(FILES, Map.of(), "s"));
  }

  @Test
  void baselinesAtTheLastAppliedVersion() {
    assertEquals("003", LegacyBaseline.baselineVersion(FILES, Map.of("V001", "a", "V002", "b", "V003", "c"), "s"));
    assertEquals("002", LegacyBaseline.baselineVersion(FILES, Map.of("V001", "a", "V002", "b"), "s"));
  }

  @Test
  void refusesAChangedFile() {
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> LegacyBaseline.baselineVersion(FILES, Map.of("V001", "a", "V002", "x"), "s"));
    assertTrue(e.getMessage().contains("V002") && e.getMessage().contains("checksum"), e.getMessage());
  }

  @Test
  void refusesAGap() {
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> LegacyBaseline.baselineVersion(FILES, Map.of("V001", "a", "V003", "c"), "s"));
    assertTrue(e.getMessage().contains("lacks V002"), e.getMessage());
  }

  @Test
  void refusesASchemaNewerThanTheJar() {
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> LegacyBaseline.baselineVersion(FILES.subList(0, 1), Map.of("V001", "a", "V002", "b"), "s"));
    assertTrue(e.getMessage().contains("newer jar"), e.getMessage());
  }
}
