package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.common.BuildInfo;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 15 item 1: the install tarball that {@code mvn package} writes unpacks into a working
 * installation, its launcher runs the jar and reports the build, and the exit codes its systemd units
 * rely on are the ones the node uses (2 for a bad configuration, 4 for a drained worker).
 */
class InstallIT {
  private record Ran(int code, String out) {}

  private static Ran run(Path dir, List<String> cmd, Map<String, String> env) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true);
    pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
    pb.environment().putAll(env);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), String.join(" ", cmd) + " did not finish");
    return new Ran(p.exitValue(), out);
  }

  private static Path unpack(Path into) throws Exception {
    String dist = System.getProperty("node.dist", "target/inspection-node-0.1.0-SNAPSHOT.tar.gz");
    assertTrue(new File(dist).exists(), dist + " is missing: mvn package writes it (the ITs run after it in mvn verify)");
    Ran tar = run(into, List.of("tar", "xzf", new File(dist).getAbsolutePath()), Map.of());
    assertEquals(0, tar.code(), tar.out());
    try (var dirs = Files.list(into)) {
      List<Path> top = dirs.toList();
      assertEquals(1, top.size(), "one top directory: " + top);
      return top.get(0);
    }
  }

  @Test
  void theTarballUnpacksIntoAnInstallationWhoseLauncherReportsTheBuild(@TempDir Path tmp) throws Exception {
    Path home = unpack(tmp);
    assertTrue(home.getFileName().toString().startsWith("inspection-node-"), home.toString());
    for (String f : List.of("lib/node.jar", "bin/inspection-node", "etc/probe.properties", "etc/worker.properties", "etc/scheduler.properties",
        "etc/secrets.env.example", "etc/node.properties.reference", "systemd/inspection-probe.service", "systemd/inspection-worker.service",
        "systemd/inspection-scheduler.service", "README.md")) {
      assertTrue(Files.isRegularFile(home.resolve(f)), "missing " + f);
    }
    Path launcher = home.resolve("bin/inspection-node");
    assertTrue(Files.isExecutable(launcher), "bin/inspection-node must be executable");

    // through a symlink, as /usr/local/bin/inspection-node -> /opt/inspection-node/bin/inspection-node
    Path link = Files.createSymbolicLink(tmp.resolve("inspection-node-link"), launcher);
    Ran version = run(tmp, List.of(link.toString(), "--version"), Map.of());
    assertEquals(0, version.code(), version.out());
    assertEquals(BuildInfo.current().line(), version.out().strip(), "the jar reports the build this test was built with");
    assertTrue(!BuildInfo.current().commit().equals("unknown"), "the build found the git commit: " + BuildInfo.current());

    Ran help = run(tmp, List.of(launcher.toString(), "--help"), Map.of());
    assertEquals(0, help.code());
    assertTrue(help.out().contains("Exit codes:") && help.out().contains("4 worker drained"), help.out());

    // a configuration error exits 2, which the units do not restart; the shipped examples name real keys
    Ran bad = run(tmp, List.of(launcher.toString(), "--config=" + home.resolve("etc/worker.properties"), "--slots.total=0"), Map.of());
    assertEquals(2, bad.code(), bad.out());
    assertTrue(bad.out().contains("slots.total"), bad.out());
    // JAVA_OPTS reaches the JVM: an impossible heap makes it fail before the node runs
    Ran opts = run(tmp, List.of(launcher.toString(), "--version"), Map.of("JAVA_OPTS", "-Xmx1k"));
    assertTrue(opts.code() != 0 && opts.out().toLowerCase().contains("heap"), opts.out());
  }

  @Test
  void aDrainedWorkerProcessExitsWithTheCodeItsUnitDoesNotRestart() throws Exception {
    try (TestEnv env = new TestEnv(4)) {
      String id = env.name + "-w1";
      String other = env.name + "-w2";
      env.start(Map.of("role", "worker", "node.id", other)); // takes the drained worker's slots (and brings up the scheduler)
      try (ChildNode worker = ChildNode.start(env, "w1", Map.of("role", "worker", "node.id", id))) {
        awaitTrue(Duration.ofSeconds(30), "the worker is ACTIVE", () -> "ACTIVE".equals(env.workerState(id)));
        int port = env.scheduler().httpPort();
        Map.Entry<Integer, String> drain = TestEnv.http(port, "POST", "/api/v1/workers/" + id + "/drain");
        assertEquals(202, drain.getKey(), drain.getValue());
        int code = worker.awaitExit(Duration.ofSeconds(60));
        assertEquals(4, code, "a drained worker exits with 4 (RestartPreventExitStatus); log: " + Files.readString(worker.log));
        assertEquals("OFFLINE", env.workerState(id));
        assertTrue(Files.readString(worker.log).contains("drained and is OFFLINE"), "it says why it left");
      }
    }
  }
}
