package dev.inspection.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.config.Config;
import dev.inspection.config.Keys;
import dev.inspection.config.Role;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The install tarball's files (src/dist, issue 15 item 1): per-role configuration examples the node
 * accepts, and systemd units that restart what a restart can fix, leave a drained worker and a bad
 * configuration alone, and outwait the shutdown grace. The units are also checked by systemd itself
 * ({@code systemd-analyze verify}, Debian's systemd package; ./run.sh test installs it when missing).
 */
class DistFilesTest {
  static final Path DIST = Path.of("src/dist");
  static final List<String> ROLES = List.of("probe", "worker", "scheduler");

  @Test
  void eachRolesExampleConfigurationIsAcceptedAndNamesItsRole() {
    for (String role : ROLES) {
      Path file = DIST.resolve("etc/" + role + ".properties");
      Config c = Config.load(new String[] {"--config", file.toString()}, Map.of());
      assertTrue(c.get(Keys.PG_TLS_CA).isEmpty() || c.get(Keys.PG_TLS_CA).startsWith("/etc/inspection-node/"), file.toString());
      Node.validate(c.with(Map.of("pg.tls.ca", ""))); // the CA file exists on the installed host only (validate reads it)
      assertEquals(Role.parse(role), c.role(), file.toString());
      assertEquals(0, c.getInt(Keys.PROBE_SIM_DEVICES), file + ": no simulated devices in production");
      assertFalse(c.getBool(Keys.DEMO_MODE), file.toString());
      assertFalse(c.get(Keys.RABBIT_USER).equals("guest"), file + ": not RabbitMQ's guest account");
      if (!role.equals("probe")) assertFalse(c.get(Keys.PG_USER).equals("postgres"), file + ": not the PostgreSQL superuser");
    }
  }

  @Test
  void theSecretsExampleSetsOnlyKnownKeys() throws IOException {
    Map<String, String> env = new LinkedHashMap<>();
    for (String line : Files.readAllLines(DIST.resolve("etc/secrets.env.example"))) {
      if (line.isBlank() || line.startsWith("#")) continue;
      String[] kv = line.split("=", 2);
      env.put(kv[0], kv[1]);
    }
    assertTrue(env.keySet().stream().allMatch(k -> k.startsWith("INSPECT_")), env.toString());
    Config c = Config.load(new String[0], env); // an unknown INSPECT_ variable stops the load
    assertFalse(c.get(Keys.API_TOKEN).isBlank());
  }

  @Test
  void eachRolesUnitRestartsOnFailureButNotAfterADrainOrABadConfiguration() throws IOException {
    long graceMs = Long.parseLong(Keys.SHUTDOWN_GRACE_MS.defaultValue());
    for (String role : ROLES) {
      Path unit = DIST.resolve("systemd/inspection-" + role + ".service");
      Map<String, String> s = section(unit, "Service");
      String what = unit + ": ";
      assertEquals("on-failure", s.get("Restart"), what + "Restart");
      List<String> prevent = Arrays.asList(s.getOrDefault("RestartPreventExitStatus", "").split("\\s+"));
      assertTrue(prevent.contains(Integer.toString(Main.EXIT_DRAINED)) && prevent.contains(Integer.toString(Main.EXIT_CONFIG)),
          what + "RestartPreventExitStatus must hold the drained and config-error codes: " + prevent);
      assertFalse(prevent.contains("3"), what + "3 is the JVM's out-of-memory exit: restart it");
      assertTrue(Long.parseLong(s.get("TimeoutStopSec")) * 1000 > graceMs, what + "TimeoutStopSec must exceed shutdown.grace.ms");
      assertTrue(s.getOrDefault("SuccessExitStatus", "").contains("143"), what + "a SIGTERM stop (143) is a success");
      String user = s.getOrDefault("User", "root");
      assertFalse(user.equals("root") || user.equals("0"), what + "User");
      assertTrue(Long.parseLong(s.get("LimitNOFILE")) >= 65536, what + "LimitNOFILE");
      assertEquals("inspection-node/" + role, s.get("StateDirectory"), what + "data dir under /var/lib");
      String exec = s.get("ExecStart");
      assertTrue(exec.startsWith("/opt/inspection-node/bin/inspection-node "), what + exec);
      for (String flag : List.of("--role=" + role, "--config=/etc/inspection-node/" + role + ".properties",
          "--data.dir=/var/lib/inspection-node/" + role)) {
        assertTrue(exec.contains(flag), what + "ExecStart lacks " + flag);
      }
      assertEquals("multi-user.target", section(unit, "Install").get("WantedBy"), what);
    }
  }

  @Test
  void theProbeUnitGrantsOnlyTheRawSocketCapabilityItsIcmpChecksNeed() throws IOException {
    Map<String, String> s = section(DIST.resolve("systemd/inspection-probe.service"), "Service");
    assertEquals("CAP_NET_RAW", s.get("AmbientCapabilities"));
    assertEquals("CAP_NET_RAW", s.get("CapabilityBoundingSet"));
    for (String role : List.of("worker", "scheduler")) {
      assertNull(section(DIST.resolve("systemd/inspection-" + role + ".service"), "Service").get("AmbientCapabilities"), role);
    }
  }

  @Test
  void systemdAcceptsEveryUnit(@TempDir Path dir) throws Exception {
    Path analyze = Path.of("/usr/bin/systemd-analyze");
    assertTrue(Files.isExecutable(analyze), "systemd-analyze is missing: apt-get install systemd (./run.sh test does)");
    // verify insists that ExecStart's program exists: point the copies at an executable stand-in
    Path launcher = dir.resolve("inspection-node");
    Files.writeString(launcher, "#!/bin/sh\n");
    Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
    for (String role : ROLES) {
      String name = "inspection-" + role + ".service";
      String text = Files.readString(DIST.resolve("systemd/" + name)).replace("/opt/inspection-node/bin/inspection-node", launcher.toString());
      Path copy = dir.resolve(name);
      Files.writeString(copy, text);
      Process p = new ProcessBuilder(analyze.toString(), "verify", copy.toString()).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), name + ": systemd-analyze did not finish");
      assertEquals(0, p.exitValue(), name + ": " + out);
      // unknown keys and bad values are only warnings: any output is a finding
      assertEquals("", out.strip(), name + ": systemd-analyze verify says");
    }
  }

  @Test
  void theLauncherIsAValidShellScript() throws Exception {
    Process p = new ProcessBuilder("sh", "-n", DIST.resolve("bin/inspection-node").toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), out);
  }

  /** The key=value lines of one [section] of a unit file (comments and other sections skipped; a repeated key keeps the last). */
  static Map<String, String> section(Path unit, String name) throws IOException {
    Map<String, String> m = new LinkedHashMap<>();
    String current = "";
    List<String> lines = new ArrayList<>(Files.readAllLines(unit));
    for (String raw : lines) {
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#") || line.startsWith(";")) continue;
      if (line.startsWith("[") && line.endsWith("]")) {
        current = line.substring(1, line.length() - 1);
        continue;
      }
      int eq = line.indexOf('=');
      if (current.equals(name) && eq > 0) m.put(line.substring(0, eq).strip(), line.substring(eq + 1).strip());
    }
    return m;
  }
}
