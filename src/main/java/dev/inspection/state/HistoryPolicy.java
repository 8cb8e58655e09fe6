package dev.inspection.state;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * Which results of a device go to {@code device_status_history} (issue 11). {@link Kind#EVERY}: every result
 * (the default). {@link Kind#CHANGES}: a result whose payload differs from the device's previous result (its
 * status is part of the payload), and otherwise one result per {@code heartbeat} so a quiet device still
 * shows it is alive (Zabbix's "discard unchanged with heartbeat"). Top-level payload fields named in
 * {@code ignoredFields} (measurements that jitter, such as {@code latency_ms}) do not make a change on their
 * own. Current status, derived state, alerts and rollups never depend on the policy: only the history rows do.
 */
public record HistoryPolicy(Kind kind, Duration heartbeat, Set<String> ignoredFields) {
  /** The two policies. */
  public enum Kind {
    EVERY, CHANGES;

    /** "every" or "changes" (case and surrounding blanks ignored); throws naming the value otherwise. */
    public static Kind parse(String s) {
      String v = s == null ? "" : s.trim().toLowerCase(Locale.ROOT);
      return switch (v) {
        case "every" -> EVERY;
        case "changes" -> CHANGES;
        default -> throw new IllegalArgumentException("history policy must be 'every' or 'changes', got '" + s + "'");
      };
    }

    public String configName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  public HistoryPolicy {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(heartbeat, "heartbeat");
    if (heartbeat.isNegative() || heartbeat.isZero()) throw new IllegalArgumentException("history heartbeat must be positive, got " + heartbeat);
    ignoredFields = Set.copyOf(ignoredFields);
    if (ignoredFields.contains("status")) throw new IllegalArgumentException("'status' cannot be ignored: a status change is always a change");
  }

  /** Every result is kept; the heartbeat and ignored fields still shape the device's {@link HistoryMark}. */
  public static HistoryPolicy every(Duration heartbeat, Set<String> ignoredFields) {
    return new HistoryPolicy(Kind.EVERY, heartbeat, ignoredFields);
  }

  /** Whether a result goes to history, given whether it is a change ({@link HistoryMark.Step#changed()}). */
  public boolean keeps(boolean changed) {
    return kind == Kind.EVERY || changed;
  }
}
