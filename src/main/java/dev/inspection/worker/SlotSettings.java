package dev.inspection.worker;

import dev.inspection.common.RetryPolicy;
import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import dev.inspection.state.HistoryPolicies;
import dev.inspection.state.SnapshotLayout;

/** Tunables of a {@link SlotProcessor}, read from the configuration. {@code reopen}: the backoff between attempts to open the consumers. */
public record SlotSettings(SlotConsumers.Prefetch prefetch, int batchMax, long lingerMs, BatchPicker.Lanes lanes, BatchHandler.Limits limits,
    long maxFutureSkewMs, RetryPolicy reopen, HistoryPolicies histories, MergeWindows windows, SnapshotLayout layout) {
  /** Throws a ConfigException naming the history or snapshot key that is wrong. */
  public static SlotSettings from(Config c) {
    return new SlotSettings(new SlotConsumers.Prefetch(c.getInt(Keys.WORKER_PREFETCH_HIGH), c.getInt(Keys.WORKER_PREFETCH_NORMAL), c.getInt(Keys.WORKER_PREFETCH_LOW)),
        c.getInt(Keys.WORKER_BATCH_MAX), c.getLong(Keys.WORKER_BATCH_LINGER_MS), BatchPicker.Lanes.of(c),
        new BatchHandler.Limits(c.getInt(Keys.WORKER_MAX_MESSAGE_BYTES), c.getInt(Keys.WORKER_MAX_BATCH_BYTES)),
        c.getLong(Keys.WORKER_MAX_FUTURE_SKEW_MS), RetryPolicy.from(c), histories(c), MergeWindows.of(c), layout(c));
  }

  private static SnapshotLayout layout(Config c) {
    try {
      return SnapshotLayout.parse(c.get(Keys.WORKER_SNAPSHOT_LAYOUT));
    } catch (IllegalArgumentException e) {
      throw new ConfigException(e.getMessage());
    }
  }

  private static HistoryPolicies histories(Config c) {
    try {
      return HistoryPolicies.parse(c.get(Keys.HISTORY_POLICY), c.get(Keys.HISTORY_POLICY_BY_PROFILE), c.getLong(Keys.HISTORY_HEARTBEAT_MS),
          c.get(Keys.HISTORY_IGNORED_FIELDS));
    } catch (IllegalArgumentException e) {
      throw new ConfigException("history.policy / history.policy.by.profile / history.heartbeat.ms / history.ignored.fields: " + e.getMessage());
    }
  }
}
