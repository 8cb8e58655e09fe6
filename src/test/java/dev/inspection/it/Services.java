package dev.inspection.it;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Stops and starts the real local services, for outage tests (the suite runs as root, like CI). */
final class Services {
  private Services() {}

  static void run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(180, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out);
    }
  }

  static String pgVersion() throws Exception {
    try (var s = Files.list(Path.of("/etc/postgresql"))) {
      return s.map(x -> x.getFileName().toString()).sorted().findFirst().orElseThrow();
    }
  }

  static void stopPostgres() throws Exception {
    run("pg_ctlcluster", "--skip-systemctl-redirect", pgVersion(), "main", "stop", "-m", "immediate");
  }

  static void startPostgres() throws Exception {
    run("pg_ctlcluster", "--skip-systemctl-redirect", pgVersion(), "main", "start");
  }

  static void stopRabbit() throws Exception {
    run("rabbitmqctl", "stop_app");
  }

  static void startRabbit() throws Exception {
    run("rabbitmqctl", "start_app");
    run("rabbitmqctl", "await_startup");
  }

  static boolean available() {
    return new File("/usr/bin/pg_ctlcluster").exists() && new File("/usr/sbin/rabbitmqctl").exists() && List.of("root").contains(System.getProperty("user.name"));
  }
}
