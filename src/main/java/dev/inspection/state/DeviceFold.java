package dev.inspection.state;

import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Folds one check result into a device's {@link DerivedState} and says which alert events it raises. A pure
 * function: the same state, check and rules always give the same next state and the same events, and time
 * comes only from the check (its collected_at), never from a clock.
 *
 * <p><b>Why replay and takeover are deterministic.</b> A check whose (cycle_id, seq) is not newer than the
 * state's {@link DerivedState#position()} changes nothing: the same state comes back and no event. So
 * <ul>
 *   <li>a redelivered or replayed result (already folded before the snapshot was committed) is a no-op, and a
 *       new owner that loads the snapshot and receives the old owner's unacked results again ends where the
 *       old owner would have ended: fold(snapshot at T0, results after T0) = fold(all results), seed §3.2;</li>
 *   <li>the events a result raises carry that result's (cycle_id, seq), so if the same result is ever folded
 *       twice from the same state (a batch rolled back and redone) it raises rows with the same UNIQUE key,
 *       which the insert ignores (D4).</li>
 * </ul>
 * The price: a result that arrives after a newer one of the same device (a redelivery overtaken by a later
 * result) does not count in the counters and rings. The current status, history and rollups still take it;
 * only the derived state follows the device's newest result.
 *
 * <p><b>Rules.</b> "device.offline": consecutive failures move the device UP → SOFT_DOWN → HARD_DOWN
 * (Nagios' max_check_attempts); FIRING exactly on the failure that reaches {@link AlertRules#offlineAfterFailures()},
 * once per outage; RESOLVED on the first UP after it fired. "device.flapping": the percent state change of the
 * ring ({@link Flapping}) starts flapping above the high threshold (FIRING, severity {@value #FLAPPING_SEVERITY})
 * and stops it below the low one (RESOLVED). While flapping, "device.offline" does not fire (no alert storm);
 * if the device is still HARD_DOWN when flapping stops, the offline alert fires then, so a real outage that
 * began while flapping is not lost.
 */
public final class DeviceFold {
  public static final String OFFLINE = "device.offline";
  public static final String FLAPPING = "device.flapping";
  /** Flapping is a warning about the signal, not an outage. */
  public static final int FLAPPING_SEVERITY = 1;
  /** Length of the rate window when the caller does not say. */
  public static final Duration DEFAULT_RATE_WINDOW = Duration.ofMinutes(5);

  private DeviceFold() {}

  /** The state after a check and the alert events the check raised (in the order they were raised). */
  public record Result(DerivedState next, List<AlertEvent> events) {
    public Result {
      Objects.requireNonNull(next, "next");
      events = List.copyOf(events);
    }
  }

  /** {@link #apply(DerivedState, Check, AlertRules, Duration)} with a rate window of {@link #DEFAULT_RATE_WINDOW}. */
  public static Result apply(DerivedState s, Check c, AlertRules r) {
    return apply(s, c, r, DEFAULT_RATE_WINDOW);
  }

  public static Result apply(DerivedState s, Check c, AlertRules r, Duration rateWindow) {
    Objects.requireNonNull(s, "state");
    Objects.requireNonNull(c, "check");
    Objects.requireNonNull(r, "rules");
    if (rateWindow == null || rateWindow.isNegative() || rateWindow.isZero()) {
      throw new IllegalArgumentException("rate window must be positive, got " + rateWindow);
    }
    if (s.position() != null && c.position().compareTo(s.position()) <= 0) {
      return new Result(s, List.of()); // not newer than what is folded in: see the class comment
    }

    List<AlertEvent> events = new ArrayList<>(2);
    TreeMap<String, Integer> firing = new TreeMap<>(s.firing());

    // Ring and flapping first: whether this very check starts flapping decides whether it may fire offline.
    List<CheckStatus> ring = FlapRing.plus(s.ring(), c.status(), r.flapWindow());
    double pct = Flapping.percentStateChange(ring, r.flapWindow());
    boolean flapping = s.flapping();
    if (!flapping && pct > r.flapHighPct()) {
      flapping = true;
      firing.put(FLAPPING, FLAPPING_SEVERITY);
      events.add(event(c, FLAPPING, AlertEvent.FIRING, FLAPPING_SEVERITY, new JsonObject()
          .put("percent_state_change", pct).put("high_threshold", r.flapHighPct()).put("window", r.flapWindow())));
    } else if (flapping && pct < r.flapLowPct()) {
      flapping = false;
      int sev = firing.remove(FLAPPING);
      events.add(event(c, FLAPPING, AlertEvent.RESOLVED, sev, new JsonObject()
          .put("percent_state_change", pct).put("low_threshold", r.flapLowPct()).put("window", r.flapWindow())));
    }

    // The offline rule's HARD/SOFT machine.
    OfflinePhase phase = s.offlinePhase();
    int failures;
    Instant downSince;
    DerivedState.Debounce debounce;
    Instant heartbeat = s.lastHeartbeatAt();
    if (c.up()) {
      if (phase.down()) phase = phase.transitionTo(OfflinePhase.UP);
      Integer sev = firing.remove(OFFLINE);
      if (sev != null) {
        events.add(event(c, OFFLINE, AlertEvent.RESOLVED, sev, new JsonObject()
            .put("down_since", s.downSince().toString()).put("consec_failures", s.consecFailures())));
      }
      failures = 0;
      downSince = null;
      debounce = null;
      heartbeat = c.collectedAt();
    } else {
      failures = s.consecFailures() == Integer.MAX_VALUE ? Integer.MAX_VALUE : s.consecFailures() + 1;
      downSince = phase.down() ? s.downSince() : c.collectedAt();
      // Once HARD, an outage stays HARD until an UP, even if the threshold was raised meanwhile.
      if (phase == OfflinePhase.HARD_DOWN || failures >= r.offlineAfterFailures()) {
        if (phase != OfflinePhase.HARD_DOWN) phase = phase.transitionTo(OfflinePhase.HARD_DOWN);
        debounce = null;
        // Fires on the HARD transition; if flapping held it back, on the first check after flapping stops.
        if (!flapping && !firing.containsKey(OFFLINE)) {
          JsonObject p = new JsonObject().put("consec_failures", failures).put("threshold", r.offlineAfterFailures())
              .put("down_since", downSince.toString());
          if (heartbeat != null) p.put("last_heartbeat_at", heartbeat.toString());
          firing.put(OFFLINE, r.offlineSeverity());
          events.add(event(c, OFFLINE, AlertEvent.FIRING, r.offlineSeverity(), p.put("check", c.payload())));
        }
      } else {
        if (phase != OfflinePhase.SOFT_DOWN) phase = phase.transitionTo(OfflinePhase.SOFT_DOWN);
        debounce = new DerivedState.Debounce(downSince, r.offlineAfterFailures());
      }
    }

    DerivedState next = new DerivedState(failures, ring, heartbeat, countIn(s.rateWindow(), c.collectedAt(), rateWindow),
        phase, debounce, downSince, flapping, c.position(), firing, s.history());
    return new Result(next, events);
  }

  /**
   * Counts a result in its epoch-aligned window. A result collected before the current window started (a
   * probe clock that stepped back) counts in the current window: the window never moves backwards.
   */
  static DerivedState.RateWindow countIn(DerivedState.RateWindow w, Instant at, Duration length) {
    long len = length.toMillis();
    Instant start = Instant.ofEpochMilli(Math.floorDiv(at.toEpochMilli(), len) * len);
    if (w == null || start.isAfter(w.windowStart())) return new DerivedState.RateWindow(start, 1, at);
    Instant last = at.isAfter(w.lastEventAt()) ? at : w.lastEventAt();
    return new DerivedState.RateWindow(w.windowStart(), w.eventsCount() + 1, last);
  }

  private static AlertEvent event(Check c, String key, String type, int severity, JsonObject payload) {
    return new AlertEvent(c.deviceId(), key, type, severity, c.collectedAt(), c.cycleId(), c.seq(), payload);
  }
}
