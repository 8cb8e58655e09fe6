package dev.inspection.worker;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import dev.inspection.control.TransitionTable;
import dev.inspection.metrics.CommitWindow;
import java.util.List;
import java.util.Optional;

/**
 * The DB-degraded write mode of one worker (seed 000 §7.5), decided from this worker's own commits. Pure: the
 * caller reports each commit (its latency, whether it failed) and asks {@link #evaluate} with the time and the age
 * of the oldest commit still in flight.
 * <ul>
 *   <li>NORMAL → DEGRADED when, over the last {@code windowMs} (since the last change), at least {@code minCommits}
 *       commits were seen and more than {@code enterFailureRatio} of them failed or their p99 exceeds
 *       {@code enterP99Ms} — or one commit has been in flight longer than {@code enterP99Ms} (a commit stuck on a
 *       lock completes or fails only much later; the p99 is at least its age already);</li>
 *   <li>DEGRADED → NORMAL once healthy — the commits of the last {@code dwellMs} fail at most
 *       {@code exitFailureRatio}, their p99 is at most {@code exitP99Ms}, and nothing is in flight longer than that —
 *       continuously for {@code dwellMs}, and never sooner than {@code dwellMs} after entering; never while the
 *       worker waits for PostgreSQL to answer at all.</li>
 * </ul>
 * The exit thresholds lie below the enter thresholds and the dwell holds the mode: one good or bad commit does not
 * flip it. The samples are dropped at each change, so a mode is judged only on what happened in it.
 */
public final class DegradedMode {
  public enum Mode { NORMAL, DEGRADED }

  static final TransitionTable<Mode> MODES = TransitionTable.of("degraded write mode", Mode.class, m -> switch (m) {
    case NORMAL -> List.of(Mode.DEGRADED);
    case DEGRADED -> List.of(Mode.NORMAL);
  });

  /** The thresholds; see the {@code worker.degraded.*} keys. */
  public record Settings(boolean enabled, long windowMs, int minCommits, double enterFailureRatio, long enterP99Ms, double exitFailureRatio,
      long exitP99Ms, long dwellMs) {
    public Settings {
      if (windowMs <= 0) throw new ConfigException("worker.degraded.window.ms must be > 0, not " + windowMs);
      if (minCommits < 1) throw new ConfigException("worker.degraded.min.commits must be >= 1, not " + minCommits);
      if (!(enterFailureRatio > 0 && enterFailureRatio <= 1)) {
        throw new ConfigException("worker.degraded.enter.failure.ratio must be in (0, 1], not " + enterFailureRatio);
      }
      if (!(exitFailureRatio >= 0 && exitFailureRatio < enterFailureRatio)) {
        throw new ConfigException("worker.degraded.exit.failure.ratio must be >= 0 and below worker.degraded.enter.failure.ratio, not " + exitFailureRatio);
      }
      if (enterP99Ms <= 0) throw new ConfigException("worker.degraded.enter.p99.ms must be > 0, not " + enterP99Ms);
      if (exitP99Ms <= 0 || exitP99Ms > enterP99Ms) {
        throw new ConfigException("worker.degraded.exit.p99.ms must be > 0 and at most worker.degraded.enter.p99.ms, not " + exitP99Ms);
      }
      if (dwellMs < 0) throw new ConfigException("worker.degraded.dwell.ms must be >= 0, not " + dwellMs);
    }

    /** Throws a ConfigException naming the key that is wrong (every worker.degraded.* and worker.backfill.* key is checked). */
    public static Settings from(Config c) {
      if (c.getLong(Keys.WORKER_DEGRADED_TICK_MS) <= 0) throw new ConfigException("worker.degraded.tick.ms must be > 0");
      if (c.getInt(Keys.WORKER_BACKFILL_BATCH) < 1) throw new ConfigException("worker.backfill.batch must be >= 1");
      if (c.getLong(Keys.WORKER_BACKFILL_INTERVAL_MS) <= 0) throw new ConfigException("worker.backfill.interval.ms must be > 0");
      return new Settings(c.getBool(Keys.WORKER_DEGRADED_ENABLED), c.getLong(Keys.WORKER_DEGRADED_WINDOW_MS), c.getInt(Keys.WORKER_DEGRADED_MIN_COMMITS),
          c.getDouble(Keys.WORKER_DEGRADED_ENTER_FAILURE_RATIO), c.getLong(Keys.WORKER_DEGRADED_ENTER_P99_MS),
          c.getDouble(Keys.WORKER_DEGRADED_EXIT_FAILURE_RATIO), c.getLong(Keys.WORKER_DEGRADED_EXIT_P99_MS), c.getLong(Keys.WORKER_DEGRADED_DWELL_MS));
    }
  }

  /** A change of mode, with why and when (epoch ms). */
  public record Change(Mode from, Mode to, String reason, long at) {}

  /** Where the mode stands: the mode, why it was entered, since when (epoch ms). */
  public record Status(Mode mode, String reason, long since) {}

  private static final int MAX_SAMPLES = 100_000;

  private final Settings settings;
  /**
   * The commits of the mode in force, which alone decide its next change (they are dropped at a change): NORMAL, the last
   * {@code windowMs}, slow above the enter p99; DEGRADED, the last {@code dwellMs} (at most {@code windowMs}), slow above
   * the exit p99.
   */
  private CommitWindow commits;
  private Status status;
  /** Since when (epoch ms) the DEGRADED mode has been healthy without a break; -1: it is not. */
  private long healthySince = -1;

  public DegradedMode(Settings settings, long now) {
    this.settings = settings;
    this.status = new Status(Mode.NORMAL, "started", now);
    this.commits = windowOf(Mode.NORMAL);
  }

  public Status status() {
    return status;
  }

  /** One finished commit: how long it took and whether it succeeded (a refused row split out is a success, an outage a failure). */
  public void commit(long at, long latencyMs, boolean ok) {
    commits.add(at, latencyMs, ok);
  }

  /**
   * Decides whether the mode changes now. {@code oldestInFlightMs}: age of the oldest commit not finished yet
   * (0: none).
   */
  public Optional<Change> evaluate(long now, long oldestInFlightMs) {
    return evaluate(now, oldestInFlightMs, true);
  }

  /**
   * As above; {@code databaseAnswers} false (the worker waits for PostgreSQL after an outage, so no commit is even
   * tried) is never healthy: an outage without commits must not look like a quiet, healthy database.
   */
  public Optional<Change> evaluate(long now, long oldestInFlightMs, boolean databaseAnswers) {
    commits.trim(now);
    if (status.mode() == Mode.NORMAL) {
      if (!settings.enabled()) return Optional.empty();
      String why = enterReason(commits, oldestInFlightMs);
      return why == null ? Optional.empty() : Optional.of(change(Mode.DEGRADED, why, now));
    }
    boolean healthy = databaseAnswers && oldestInFlightMs <= settings.exitP99Ms() && commits.failureRatio() <= settings.exitFailureRatio()
        && !commits.p99AboveLimit();
    if (!healthy) {
      healthySince = -1;
      return Optional.empty();
    }
    if (healthySince < 0) healthySince = now;
    if (now - healthySince < settings.dwellMs() || now - status.since() < settings.dwellMs()) return Optional.empty();
    return Optional.of(change(Mode.NORMAL, String.format("healthy for %d s: %d commit(s) in the last %d s, %d failed, p99 %d ms",
        (now - healthySince) / 1000, commits.commits(), settings.dwellMs() / 1000, commits.failed(), commits.p99Ms()), now));
  }

  private String enterReason(CommitWindow f, long oldestInFlightMs) {
    if (oldestInFlightMs > settings.enterP99Ms()) {
      return String.format("a commit in flight for %d ms > %d ms (worker.degraded.enter.p99.ms)", oldestInFlightMs, settings.enterP99Ms());
    }
    if (f.commits() < settings.minCommits()) return null;
    if (f.failureRatio() > settings.enterFailureRatio()) {
      return String.format("%d of %d commits failed in the last %d s (%.0f %% > %.0f %%, worker.degraded.enter.failure.ratio)", f.failed(), f.commits(),
          settings.windowMs() / 1000, 100 * f.failureRatio(), 100 * settings.enterFailureRatio());
    }
    if (f.p99AboveLimit()) {
      return String.format("commit p99 %d ms over %d commits in the last %d s > %d ms (worker.degraded.enter.p99.ms)", f.p99Ms(), f.commits(),
          settings.windowMs() / 1000, settings.enterP99Ms());
    }
    return null;
  }

  private Change change(Mode to, String reason, long now) {
    Mode from = status.mode();
    status = new Status(MODES.check(from, to), reason, now);
    commits = windowOf(to);
    healthySince = -1;
    return new Change(from, to, reason, now);
  }

  /** The commits a mode is judged on, empty. */
  private CommitWindow windowOf(Mode mode) {
    return mode == Mode.NORMAL ? new CommitWindow(settings.windowMs(), settings.enterP99Ms(), MAX_SAMPLES)
        : new CommitWindow(Math.min(settings.dwellMs(), settings.windowMs()), settings.exitP99Ms(), MAX_SAMPLES);
  }
}
