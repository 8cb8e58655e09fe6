package dev.inspection.node;

import dev.inspection.admin.HttpTls;
import dev.inspection.common.BuildInfo;
import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import dev.inspection.config.LogSetup;
import dev.inspection.config.Secrets;
import java.time.Clock;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar node.jar --role=probe|worker|scheduler|all [--config FILE] [--key=value ...]}, or {@code java -jar node.jar migrate [...]}
 * ({@link MigrateCommand}); see {@code --help}.
 * Its exit codes tell a supervisor (the systemd units) whether a restart can help; see {@link #EXIT_CODES}.
 */
public final class Main {
  private Main() {}

  /** Start-up failed (a service unreachable for 120 s, a port taken): a restart may succeed. */
  static final int EXIT_START_FAILED = 1;
  /** The configuration is wrong: a restart repeats the error until someone fixes it. */
  static final int EXIT_CONFIG = 2;
  /** A worker was drained and is OFFLINE: it left on purpose and must not come back by itself (3 is the JVM's out-of-memory exit). */
  static final int EXIT_DRAINED = 4;

  /** The exit codes, for {@code --help}. */
  static final String EXIT_CODES = """
      Exit codes: 0 stopped; %d could not start (a restart may help); %d configuration error (fix it: do not restart);
      %d worker drained and OFFLINE (do not restart); 3 out of memory with -XX:+ExitOnOutOfMemoryError; 143 stopped by SIGTERM.
      """.formatted(EXIT_START_FAILED, EXIT_CONFIG, EXIT_DRAINED);

  public static void main(String[] args) {
    if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
      System.out.print(BuildInfo.current().line() + "\n" + Config.help() + "\n" + EXIT_CODES);
      return;
    }
    if (Arrays.asList(args).contains("--version")) {
      System.out.println(BuildInfo.current().line());
      return;
    }
    if (Arrays.asList(args).contains("--print-config")) {
      System.out.print(Config.propertiesTemplate());
      return;
    }
    boolean migrateOnly = args.length > 0 && args[0].equals("migrate");
    Config config;
    try {
      config = Config.load(migrateOnly ? Arrays.copyOfRange(args, 1, args.length) : args, System.getenv());
      Node.validate(config);
      LogSetup.install(config); // node/role in every line, log.format, JUL through slf4j
    } catch (ConfigException e) {
      System.err.println("error: " + Secrets.redact(e.getMessage()));
      System.exit(EXIT_CONFIG);
      return;
    }
    if (migrateOnly) {
      System.exit(MigrateCommand.run(config));
      return;
    }
    Logger log = LoggerFactory.getLogger(Main.class);
    log.info("starting node {} as role {} ({})", config.nodeId(), config.role().name().toLowerCase(), BuildInfo.current().line());
    config.describe().forEach(l -> log.debug("config {}", l));
    Node node = new Node(config, Clock.systemUTC());
    // a drained worker (POST /api/v1/workers/{id}/drain) is told OFFLINE and leaves; the shutdown hook stops it cleanly
    node.onExitRequest(() -> new Thread(() -> {
      log.info("this worker was drained and is OFFLINE: exiting with code {} (not restarted by the systemd unit)", EXIT_DRAINED);
      System.exit(EXIT_DRAINED);
    }, "drained-exit").start());
    try {
      node.start().toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    } catch (Exception e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      if (cause instanceof ConfigException) {
        System.err.println("error: " + Secrets.redact(cause.getMessage()));
        System.exit(EXIT_CONFIG);
      }
      System.err.println("error: the node could not start: " + Secrets.redact(cause.getMessage()));
      System.exit(EXIT_START_FAILED);
      return;
    }
    // a log line (not a bare println) so log.format=json output stays one JSON object per line
    log.info("node {} ({}) is up: {}://{}:{}/health/ready", config.nodeId(), config.role().name().toLowerCase(), HttpTls.scheme(config),
        config.get(Keys.HTTP_HOST), node.httpPort());
    long grace = config.getLong(Keys.SHUTDOWN_GRACE_MS);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      log.info("shutting down (grace {} ms): finishing batches, flushing the outbox, handing back leases", grace);
      try {
        node.stop().toCompletionStage().toCompletableFuture().get(grace, TimeUnit.MILLISECONDS);
        log.info("stopped cleanly");
      } catch (Exception e) {
        log.warn("grace period of {} ms ran out; exiting anyway (unacked messages are redelivered, unconfirmed outbox rows replayed)", grace);
      }
    }, "shutdown"));
  }
}
