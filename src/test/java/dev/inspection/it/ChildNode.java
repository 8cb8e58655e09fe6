package dev.inspection.it;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A node in its own JVM, started from the shaded jar, for faults that need a real process (kill -9, SIGSTOP). */
public final class ChildNode implements AutoCloseable {
  private final Process process;
  public final Path log;

  private ChildNode(Process process, Path log) {
    this.process = process;
    this.log = log;
  }

  public static ChildNode start(TestEnv env, String label, Map<String, String> flags) throws Exception {
    return start(env, label, flags, Map.of());
  }

  /** As {@link #start(TestEnv, String, Map)}, with extra environment variables for the child (e.g. INSPECT_*_FILE, LOG_LEVEL). */
  public static ChildNode start(TestEnv env, String label, Map<String, String> flags, Map<String, String> environment) throws Exception {
    return start(env, label, flags, environment, List.of());
  }

  /** As above, the JVM started through {@code wrapper} (e.g. strace injecting faults), which must exec it with its arguments. */
  public static ChildNode start(TestEnv env, String label, Map<String, String> flags, Map<String, String> environment, List<String> wrapper)
      throws Exception {
    String jar = System.getProperty("node.jar", "target/node.jar");
    if (!new File(jar).exists()) throw new IllegalStateException(jar + " is missing: run `mvn package` (the ITs run after it in `mvn verify`)");
    List<String> cmd = new ArrayList<>(wrapper);
    cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m", "-jar", jar));
    Map<String, String> all = new HashMap<>(env.baseFlags());
    all.put("http.port", "0");
    all.putAll(flags);
    all.forEach((k, v) -> cmd.add("--" + k + "=" + v));
    Path log = env.dataDir.resolve(label + ".log");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    pb.environment().putAll(environment);
    ChildNode c = new ChildNode(pb.start(), log);
    try {
      // a liveness bound: a JVM on a loaded 2-core machine has taken over a minute to start
      TestEnv.awaitTrue(Duration.ofSeconds(150), label + " is up (see " + log + ")",
          () -> Files.exists(log) && Files.readString(log).contains(") is up:"));
    } catch (Throwable notUp) {
      c.close(); // never left running once its test gave up on it (it would outlive the test's schema, and load the machine)
      throw notUp;
    }
    return c;
  }

  public long pid() {
    return process.pid();
  }

  /** SIGSTOP: the whole process pauses; its sockets stay open, so nobody notices but by silence. */
  public void pause() throws Exception {
    signal("STOP");
  }

  /** SIGCONT. */
  public void resume() throws Exception {
    signal("CONT");
  }

  private void signal(String sig) throws Exception {
    int rc = new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid())).inheritIO().start().waitFor();
    if (rc != 0) throw new IllegalStateException("kill -" + sig + " " + process.pid() + " failed with " + rc);
  }

  public boolean alive() {
    return process.isAlive();
  }

  /** kill -9: no shutdown hook, no flush, no goodbye. */
  public void kill9() throws Exception {
    process.descendants().forEach(ProcessHandle::destroyForcibly); // the JVM itself when a wrapper started it
    process.destroyForcibly();
    process.waitFor();
  }

  /** SIGTERM: the graceful path (D6). */
  public int terminate(Duration within) throws Exception {
    process.descendants().forEach(ProcessHandle::destroy); // the JVM itself when a wrapper started it (strace would only detach)
    process.destroy();
    if (!process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS)) throw new IllegalStateException("did not exit in " + within);
    return process.exitValue();
  }

  /** Waits for the process to end by itself (e.g. a drained worker) and returns its exit code. */
  public int awaitExit(Duration within) throws Exception {
    if (!process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS)) throw new IllegalStateException("did not exit in " + within + " (see " + log + ")");
    return process.exitValue();
  }

  @Override
  public void close() throws Exception {
    if (process.isAlive()) kill9();
  }
}
