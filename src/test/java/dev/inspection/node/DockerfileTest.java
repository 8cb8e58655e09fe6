package dev.inspection.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
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

  /** Issue 15 item 1: what an orchestrator needs from the image besides the user. */
  @Test
  void theImageHasAHealthCheckADataVolumeAStopSignalAndAContainerSizedHeap() throws Exception {
    List<String> lines = Files.readAllLines(Path.of("Dockerfile")).stream().map(String::trim).toList();
    String code = String.join("\n", lines.stream().filter(l -> !l.startsWith("#")).toList());
    assertTrue(code.contains("HEALTHCHECK") && code.contains("dev.inspection.node.ReadyCheck"), "HEALTHCHECK through ReadyCheck (no curl in the image)");
    assertTrue(code.contains("--start-period=120s"), "start-up may wait 120 s for the services");
    assertTrue(code.contains("VOLUME [\"/app/data\"]"), "the data dir (outbox) is a volume");
    assertTrue(code.indexOf("chown inspection:inspection /app/data") < code.indexOf("VOLUME"), "VOLUME after the chown, or the volume is root's");
    assertTrue(code.contains("STOPSIGNAL SIGTERM"));
    assertTrue(code.contains("MaxRAMPercentage"), "the heap follows the container's memory limit");
    long grace = Long.parseLong(dev.inspection.config.Keys.SHUTDOWN_GRACE_MS.defaultValue());
    String note = String.join("\n", lines.stream().filter(l -> l.startsWith("#")).toList());
    int at = note.indexOf("--stop-timeout ");
    assertTrue(at >= 0, "the stop timeout to run with is documented");
    long stop = Long.parseLong(note.substring(at + "--stop-timeout ".length()).split("\\D", 2)[0]);
    assertTrue(stop * 1000 > grace, "--stop-timeout " + stop + " s must exceed shutdown.grace.ms " + grace);
    assertEquals(1, lines.stream().filter(l -> l.startsWith("HEALTHCHECK")).count());
  }
}
