package dev.inspection.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The database refuses a state the enums do not know (V006's CHECK constraints); this keeps those lists and
 * the enums equal, so adding a state without a migration that allows it fails the build.
 */
class StateCheckMigrationTest {
  private static final String FILE = "/db/migration/V006__state_checks.sql";
  private static final Pattern TABLE = Pattern.compile("ALTER TABLE (\\w+)");
  private static final Pattern CHECK = Pattern.compile("CHECK \\((\\w+) IN \\(([^)]*)\\)\\)");

  @Test
  void everyStateColumnAllowsExactlyTheNamesOfItsStateMachine() throws IOException {
    List<String> slot = names(SlotState.values());
    List<String> worker = names(WorkerState.values());
    Map<String, List<String>> expected = new TreeMap<>(Map.of(
        "slot_lease.state", slot, "slot_lease_history.old_state", slot, "slot_lease_history.new_state", slot,
        "worker_heartbeat.state", worker, "worker_state_history.old_state", worker, "worker_state_history.new_state", worker));
    assertEquals(expected, checks(read()), "V006's CHECK lists against SlotState/WorkerState: a new state needs a new migration");
  }

  /** table.column → the quoted names of its {@code CHECK (column IN (...))}, in the order written. */
  private static Map<String, List<String>> checks(String sql) {
    Map<String, List<String>> out = new TreeMap<>();
    for (String statement : sql.replaceAll("--[^\n]*", "").split(";")) {
      Matcher table = TABLE.matcher(statement);
      if (!table.find()) continue;
      Matcher check = CHECK.matcher(statement);
      while (check.find()) {
        List<String> names = Arrays.stream(check.group(2).split(",")).map(n -> n.trim().replace("'", "")).toList();
        out.put(table.group(1) + "." + check.group(1), names);
      }
    }
    return out;
  }

  private static List<String> names(Enum<?>[] values) {
    return Arrays.stream(values).map(Enum::name).toList();
  }

  private static String read() throws IOException {
    try (InputStream in = StateCheckMigrationTest.class.getResourceAsStream(FILE)) {
      assertNotNull(in, FILE + " is on the classpath");
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
