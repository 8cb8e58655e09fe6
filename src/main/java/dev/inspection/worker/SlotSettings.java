package dev.inspection.worker;

import dev.inspection.common.RetryPolicy;
import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import dev.inspection.state.HistoryPolicies;

/** Tunables of a {@link SlotProcessor}, read from the configuration. {@code reopen}: the backoff between attempts to open the consumers. */
public record SlotSettings(SlotConsumers.Prefetch prefetch, int batchMax, long lingerMs, BatchPicker.Lanes lanes, BatchHandler.Limits limits,
    long maxFutureSkewMs, RetryPolicy reopen, HistoryPolicies histories, MergeWindows windows) {
  /** Throws a ConfigException naming the history key that is wrong. */
  public static SlotSettings from(Config c) {
    return new SlotSettings(new SlotConsumers.Prefetch(c.getInt(Keys.WORKER_PREFETCH_HIGH), c.getInt(Keys.WORKER_PREFETCH_NORMAL), c.getInt(Keys.WORKER_PREFETCH_LOW)),
        c.getInt(Keys.WORKER_BATCH_MAX), c.getLong(Keys.WORKER_BATCH_LINGER_MS), BatchPicker.Lanes.of(c),
        new BatchHandler.Limits(c.getInt(Keys.WORKER_MAX_MESSAGE_BYTES), c.getInt(Keys.WORKER_MAX_BATCH_BYTES)),
        c.getLong(Keys.WORKER_MAX_FUTURE_SKEW_MS), RetryPolicy.from(c), histories(c), MergeWindows.of(c));
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
