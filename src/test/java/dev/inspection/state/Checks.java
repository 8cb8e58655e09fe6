package dev.inspection.state;

import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

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

  /**
   * 400 checks of one device at random (spells of 10 % and 45 % DOWN, so that debounces, offline alerts and flapping all
   * happen), each step 37 s and an odd fraction, so that instants carry millis, micros and nanos, not only whole seconds.
   */
  static List<Check> randomSeries(String device, Random random) {
    StringBuilder pattern = new StringBuilder();
    for (int i = 0; i < 400; i++) pattern.append(random.nextInt(100) < (i % 100 < 50 ? 10 : 45) ? 'D' : 'U');
    Duration step = Duration.ofSeconds(37).plusNanos(random.nextInt(3) == 0 ? 123_000_000 : 4_567L + random.nextInt(1000));
    return series(device, pattern.toString(), T0, step, 0);
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
