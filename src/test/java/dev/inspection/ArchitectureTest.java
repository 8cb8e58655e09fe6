package dev.inspection;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The one-way house (README "Layout"): packages import downwards only. The table below is the rule and
 * the README's layer drawing is its prose; a new import that goes sideways or up fails the build here.
 */
class ArchitectureTest {
  /** Each main package and the project packages it may import (besides itself). */
  static final Map<String, Set<String>> MAY_IMPORT = Map.ofEntries(
      // ground floor: nothing of ours (common reads its retry policy from config)
      Map.entry("config", Set.of()),
      Map.entry("common", Set.of("config")),
      Map.entry("metrics", Set.of()),
      Map.entry("state", Set.of()),
      Map.entry("control", Set.of()),
      // shared parts
      // messaging -> state: the envelope writes and reads its instants with state's IsoInstant (pure, ground floor)
      Map.entry("messaging", Set.of("config", "common", "state")),
      Map.entry("store", Set.of("config", "common")),
      Map.entry("inventory", Set.of("config", "common")),
      Map.entry("coordination", Set.of("config", "common")),
      // roles
      Map.entry("outbox", Set.of("config", "common", "metrics", "messaging")),
      // probe -> coordination: it hears the fleet mode on Redis (issue 12), like workers hear lease changes
      Map.entry("probe", Set.of("config", "common", "metrics", "messaging", "inventory", "control", "state", "outbox", "coordination")),
      Map.entry("worker", Set.of("config", "common", "metrics", "messaging", "inventory", "control", "state", "store", "coordination")),
      Map.entry("scheduler", Set.of("config", "common", "metrics", "messaging", "inventory", "control", "state", "store", "coordination")),
      // the API over the scheduler
      Map.entry("admin", Set.of("config", "common", "metrics", "inventory", "control", "state", "scheduler")),
      // the top floor: wiring, imported by nobody
      Map.entry("node", Set.of("config", "common", "metrics", "messaging", "inventory", "control", "state", "store", "coordination",
          "outbox", "probe", "worker", "scheduler", "admin")));

  /** Deciding code: no database, broker, Redis, HTTP or event loop in here. */
  static final List<String> PURE = List.of("state", "control");

  static final List<String> IO = List.of("io.vertx.sqlclient..", "io.vertx.pgclient..", "com.rabbitmq..", "io.vertx.redis..", "io.vertx.ext.web..",
      "io.vertx.core.http..", "java.sql..", "java.net..");

  static JavaClasses main;

  @BeforeAll
  static void importMainClasses() {
    main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("dev.inspection");
  }

  @Test
  void noPackageIsInAnImportCycle() {
    slices().matching("dev.inspection.(*)..").should().beFreeOfCycles().check(main);
  }

  @Test
  void everyMainPackageIsInTheLayerTable() throws IOException {
    Set<String> onDisk = new TreeSet<>();
    try (Stream<Path> dirs = Files.list(Path.of("src/main/java/dev/inspection"))) {
      dirs.filter(Files::isDirectory).forEach(d -> onDisk.add(d.getFileName().toString()));
    }
    assertEquals(new TreeSet<>(MAY_IMPORT.keySet()), onDisk, "a new package needs its line in MAY_IMPORT and in the README's layout");
  }

  @Test
  void packagesImportOnlyTheLayersBelowThem() {
    for (Map.Entry<String, Set<String>> e : MAY_IMPORT.entrySet()) {
      List<String> forbidden = new ArrayList<>();
      for (String other : MAY_IMPORT.keySet()) {
        if (!other.equals(e.getKey()) && !e.getValue().contains(other)) forbidden.add("dev.inspection." + other + "..");
      }
      noClasses().that().resideInAPackage("dev.inspection." + e.getKey() + "..")
          .should().dependOnClassesThat().resideInAnyPackage(forbidden.toArray(String[]::new))
          .because(e.getKey() + " may import only " + e.getValue())
          .check(main);
    }
  }

  @Test
  void nothingImportsTheWiring() {
    noClasses().that().resideOutsideOfPackage("dev.inspection.node..").should().dependOnClassesThat().resideInAPackage("dev.inspection.node..")
        .check(main);
  }

  @Test
  void workerAndSchedulerShareOnlyTheControlVocabulary() {
    noClasses().that().resideInAPackage("dev.inspection.worker..").should().dependOnClassesThat().resideInAPackage("dev.inspection.scheduler..")
        .check(main);
    noClasses().that().resideInAPackage("dev.inspection.scheduler..").should().dependOnClassesThat().resideInAPackage("dev.inspection.worker..")
        .check(main);
  }

  @Test
  void decidingCodeDoesNoIo() {
    for (String p : PURE) {
      noClasses().that().resideInAPackage("dev.inspection." + p + "..").should().dependOnClassesThat().resideInAnyPackage(IO.toArray(String[]::new))
          .because(p + " holds pure logic that is unit-tested without services")
          .check(main);
    }
  }

  @Test
  void noMainSourceFileIsOver400Lines() throws IOException {
    List<String> big = new ArrayList<>();
    try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        long lines;
        try (Stream<String> l = Files.lines(f)) {
          lines = l.count();
        }
        if (lines > 400) big.add(f + " (" + lines + " lines)");
      }
    }
    assertTrue(big.isEmpty(), "a class over 400 lines usually does more than one job; split it: " + big);
  }
}
