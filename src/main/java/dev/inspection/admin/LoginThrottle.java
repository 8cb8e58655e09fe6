package dev.inspection.admin;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Slows password guessing down (issue 10): failed logins are counted per user name and per address;
 * after {@code freeFailures} of them each further failure makes that key wait, 1 s doubling up to
 * {@code maxDelayMs}. While either key of an attempt waits, the attempt is refused before the password
 * is looked at (the caller answers 429 with Retry-After). A success clears the user's and the address's
 * count. Pure: the caller passes the time; one event loop uses it, so it is not thread-safe. At most
 * {@code maxKeys} keys are remembered (the oldest is forgotten first), so a flood of names cannot grow it.
 */
final class LoginThrottle {
  static final long BASE_DELAY_MS = 1000;

  private record Count(int failures, long blockedUntil) {}

  private final int freeFailures;
  private final long maxDelayMs;
  private final int maxKeys;
  private final LinkedHashMap<String, Count> counts = new LinkedHashMap<>(16, 0.75f, true);

  LoginThrottle(int freeFailures, long maxDelayMs, int maxKeys) {
    if (freeFailures < 0 || maxDelayMs < BASE_DELAY_MS || maxKeys < 2) throw new IllegalArgumentException("bad throttle settings");
    this.freeFailures = freeFailures;
    this.maxDelayMs = maxDelayMs;
    this.maxKeys = maxKeys;
  }

  /** Milliseconds the attempt of {@code user} from {@code address} must still wait; 0 = it may try now. */
  long waitMs(String user, String address, long nowMs) {
    return Math.max(wait(userKey(user), nowMs), wait(addressKey(address), nowMs));
  }

  /** Records a failed attempt; returns the wait it now imposes (0 while within the free failures). */
  long failed(String user, String address, long nowMs) {
    return Math.max(fail(userKey(user), nowMs), fail(addressKey(address), nowMs));
  }

  void succeeded(String user, String address) {
    counts.remove(userKey(user));
    counts.remove(addressKey(address));
  }

  /** The delay after {@code failures} failures in a row: 0 within the free ones, then 1 s, 2 s, 4 s ... up to the cap. */
  long delayAfter(int failures) {
    int over = failures - freeFailures;
    if (over <= 0) return 0;
    if (over > 40) return maxDelayMs;
    return Math.min(maxDelayMs, BASE_DELAY_MS << (over - 1));
  }

  int size() {
    return counts.size();
  }

  private long wait(String key, long now) {
    Count c = counts.get(key);
    return c == null ? 0 : Math.max(0, c.blockedUntil() - now);
  }

  private long fail(String key, long now) {
    Count old = counts.get(key);
    int n = old == null ? 1 : old.failures() + 1;
    long delay = delayAfter(n);
    counts.put(key, new Count(n, now + delay));
    trim();
    return delay;
  }

  private void trim() {
    Iterator<Map.Entry<String, Count>> it = counts.entrySet().iterator();
    while (counts.size() > maxKeys && it.hasNext()) {
      it.next();
      it.remove();
    }
  }

  private static String userKey(String user) {
    return "u:" + (user == null ? "" : user.trim().toLowerCase(Locale.ROOT));
  }

  private static String addressKey(String address) {
    return "a:" + (address == null ? "" : address);
  }
}
