package dev.inspection.node;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The image runs as an unprivileged user that owns only the data directory (issue 10 item 7). */
class DockerfileTest {
  @Test
  void theImageRunsAsAnUnprivilegedUserOwningOnlyTheDataDirectory() throws Exception {
    List<String> lines = Files.readAllLines(Path.of("Dockerfile")).stream().map(String::trim).filter(l -> !l.startsWith("#")).toList();
    List<String> users = lines.stream().filter(l -> l.startsWith("USER ")).toList();
    assertTrue(!users.isEmpty(), "no USER instruction: the node would run as root");
    String last = users.get(users.size() - 1).substring(5).trim();
    assertFalse(last.equals("root") || last.startsWith("0:") || last.equals("0"), "the final USER is root: " + last);
    int userAt = lines.indexOf(users.get(users.size() - 1));
    int entryAt = lines.stream().filter(l -> l.startsWith("ENTRYPOINT")).findFirst().map(lines::indexOf).orElse(-1);
    assertTrue(userAt >= 0 && userAt < entryAt, "USER must come before ENTRYPOINT");
    String all = String.join("\n", lines);
    assertTrue(all.contains("chown inspection:inspection /app/data"), "the data directory (data.dir, the outbox) must be the user's");
    assertFalse(all.contains("chown -R") || all.contains("chown inspection:inspection /app\n"), "the user must not own the jar or the app directory");
  }
}
