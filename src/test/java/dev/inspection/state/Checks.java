package dev.inspection.state;

import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** Test helpers: series of checks written as "UUDDU…", and folding many of them. */
final class Checks {
  static final Instant T0 = Instant.parse("2026-04-25T10:00:00Z");

  private Checks() {}

  /** One check per character ('U' up, 'D' down), a minute apart, ten per cycle, seq counting from 1. */
  static List<Check> series(String device, String pattern) {
    return series(device, pattern, T0, Duration.ofMinutes(1), 0);
  }

  static List<Check> series(String device, String pattern, Instant start, Duration step, long firstIndex) {
    List<Check> out = new ArrayList<>();
    for (int i = 0; i < pattern.length(); i++) {
      long n = firstIndex + i;
      char ch = pattern.charAt(i);
      if (ch != 'U' && ch != 'D') throw new IllegalArgumentException("pattern letters are U and D: " + pattern);
      boolean up = ch == 'U';
      out.add(new Check(device, 1 + n / 10, n + 1, start.plus(step.multipliedBy(i)), up,
          new JsonObject().put("status", up ? "UP" : "DOWN").put("latency_ms", up ? 12 : null)));
    }
    return out;
  }

  static String repeat(String s, int times) {
    return s.repeat(times);
  }

  /** Folds every check in order; the events of all of them, in order. */
  static DeviceFold.Result foldAll(DerivedState s, List<Check> checks, AlertRules r) {
    List<AlertEvent> events = new ArrayList<>();
    for (Check c : checks) {
      DeviceFold.Result res = DeviceFold.apply(s, c, r);
      s = res.next();
      events.addAll(res.events());
    }
    return new DeviceFold.Result(s, events);
  }

  /** Indices (into {@code checks}) of the checks that raised an event of this key and type. */
  static List<Integer> indicesOf(DerivedState s, List<Check> checks, AlertRules r, String key, String type) {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < checks.size(); i++) {
      DeviceFold.Result res = DeviceFold.apply(s, checks.get(i), r);
      s = res.next();
      for (AlertEvent e : res.events()) if (e.alertKey().equals(key) && e.type().equals(type)) out.add(i);
    }
    return out;
  }
}
