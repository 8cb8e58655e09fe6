package dev.inspection.state;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The history policy of each payload profile: one policy for every profile, and overrides by profile name.
 * The heartbeat and the ignored fields are shared, so a device's {@link HistoryMark} is the same whichever
 * policy its profile has (switching a profile's policy needs no migration of derived state).
 */
public record HistoryPolicies(HistoryPolicy fallback, Map<String, HistoryPolicy> byProfile) {
  public HistoryPolicies {
    byProfile = Collections.unmodifiableMap(new TreeMap<>(byProfile));
  }

  /** Every profile keeps every result (the default). */
  public static final HistoryPolicies EVERY = new HistoryPolicies(HistoryPolicy.every(Duration.ofMinutes(15), Set.of("latency_ms")), Map.of());

  public HistoryPolicy forProfile(String profile) {
    return byProfile.getOrDefault(profile, fallback);
  }

  /**
   * From the configuration's words: {@code policy} "every" or "changes"; {@code overrides} a comma-separated list
   * of {@code profile=policy} (empty: none), each profile one of {@link PayloadProfiles#all()}; {@code ignored} a
   * comma-separated list of top-level payload fields. Throws an IllegalArgumentException saying what is wrong.
   */
  public static HistoryPolicies parse(String policy, String overrides, long heartbeatMs, String ignored) {
    if (heartbeatMs <= 0) throw new IllegalArgumentException("the history heartbeat must be positive, got " + heartbeatMs + " ms");
    Duration heartbeat = Duration.ofMillis(heartbeatMs);
    Set<String> fields = Arrays.stream(ignored.split(",")).map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toSet());
    HistoryPolicy fallback = new HistoryPolicy(HistoryPolicy.Kind.parse(policy), heartbeat, fields);
    Map<String, HistoryPolicy> by = PayloadProfiles.perProfile(overrides, "profile=policy", "hotel_room=changes",
        (profile, kind) -> new HistoryPolicy(HistoryPolicy.Kind.parse(kind), heartbeat, fields));
    return new HistoryPolicies(fallback, by);
  }
}
