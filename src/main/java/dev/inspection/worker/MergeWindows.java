package dev.inspection.worker;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import dev.inspection.messaging.CollectedAt;
import dev.inspection.state.PayloadProfile;
import dev.inspection.state.PayloadProfiles;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * The merge window of each payload profile ({@code worker.merge.window.ms.by.profile}, default hotel_room=500 as in
 * seed 004; a profile not named has none). A delivery's profile is read without parsing it, as {@code collected_at}
 * is ({@link CollectedAt}): a pushed frame names its profile in its payload
 * ({@code "payload_profile":"hotel_room"}, {@link PayloadProfiles#PROFILE_FIELD}). A message whose frames name
 * several profiles with windows waits for the shortest.
 */
public record MergeWindows(Map<String, Long> byProfile) {
  /** Longest window accepted: a held delivery is unacked, so it must stay well below the broker's consumer timeout. */
  public static final long MAX_MS = 10_000;
  public static final MergeWindows NONE = new MergeWindows(Map.of());

  public MergeWindows {
    byProfile = Collections.unmodifiableMap(new TreeMap<>(byProfile));
  }

  public static MergeWindows of(Config c) {
    try {
      return parse(c.get(Keys.WORKER_MERGE_WINDOW_MS_BY_PROFILE));
    } catch (IllegalArgumentException e) {
      throw new ConfigException(Keys.WORKER_MERGE_WINDOW_MS_BY_PROFILE.name() + ": " + e.getMessage());
    }
  }

  /** {@code profile=ms[,profile=ms]}, each profile one of {@link PayloadProfiles#all()}, 0 &lt;= ms &lt;= {@value #MAX_MS}; empty: none. */
  public static MergeWindows parse(String spec) {
    return new MergeWindows(PayloadProfiles.perProfile(spec, "profile=ms", "hotel_room=500", (profile, text) -> {
      long ms;
      try {
        ms = Long.parseLong(text);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("the window of " + profile + " must be a whole number of ms, got '" + text + "'");
      }
      if (ms < 0 || ms > MAX_MS) throw new IllegalArgumentException("the window of " + profile + " must be 0.." + MAX_MS + " ms, got " + ms);
      return ms;
    }));
  }

  /** The window of the profile a message's frames name, in ms; 0 when none of them has one. Runs for every delivery. */
  public long windowMs(byte[] body) {
    long window = 0;
    for (Map.Entry<String, Long> e : byProfile.entrySet()) {
      if (e.getValue() > 0 && CollectedAt.indexOf(body, MARKERS.get(e.getKey())) >= 0 && (window == 0 || e.getValue() < window)) window = e.getValue();
    }
    return window;
  }

  /** Each built-in profile's marker, encoded once (parse admits only those names), not once per delivery. */
  private static final Map<String, byte[]> MARKERS = markers();

  private static Map<String, byte[]> markers() {
    Map<String, byte[]> out = new TreeMap<>();
    for (PayloadProfile p : PayloadProfiles.all()) out.put(p.name(), marker(p.name()));
    return Collections.unmodifiableMap(out);
  }

  private static byte[] marker(String profile) {
    return ("\"" + PayloadProfiles.PROFILE_FIELD + "\":\"" + profile + "\"").getBytes(StandardCharsets.UTF_8);
  }
}
