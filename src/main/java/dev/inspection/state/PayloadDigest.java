package dev.inspection.state;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A 64-bit digest of a JSON payload, for "did the payload change?" ({@link HistoryMark}). Equal payloads give
 * equal digests whatever the order of their object fields and however a number is spelled (1, 1.0, 1e0);
 * different payloads differ except with a chance of about 2^-64. Top-level fields in {@code ignored} are left
 * out. Stable across JVMs and releases (no identity or seeded hashes): digests are stored in derived state.
 */
public final class PayloadDigest {
  private static final long NULL = 0x6a09e667f3bcc908L;
  private static final long TRUE = 0xbb67ae8584caa73bL;
  private static final long FALSE = 0x3c6ef372fe94f82bL;
  private static final long STRING = 0xa54ff53a5f1d36f1L;
  private static final long NUMBER = 0x510e527fade682d1L;
  private static final long ARRAY = 0x9b05688c2b3e6c1fL;
  private static final long OBJECT = 0x1f83d9abfb41bd6bL;

  private PayloadDigest() {}

  public static long of(JsonObject payload, Set<String> ignored) {
    long sum = 0;
    for (Map.Entry<String, Object> e : payload) {
      if (!ignored.contains(e.getKey())) sum += entry(e.getKey(), e.getValue());
    }
    return mix(OBJECT ^ sum);
  }

  private static long entry(String key, Object value) {
    return mix(string(key) * 31 + value(value));
  }

  private static long value(Object v) {
    if (v == null) return NULL;
    if (v instanceof Boolean b) return b ? TRUE : FALSE;
    if (v instanceof CharSequence s) return string(s);
    if (v instanceof Number n) return number(n);
    if (v instanceof JsonObject o) return object(o.getMap());
    if (v instanceof Map<?, ?> m) return object(m);
    if (v instanceof JsonArray a) return array(a.getList());
    if (v instanceof List<?> l) return array(l);
    return string(v.toString()); // a type JSON does not have (e.g. bytes): by its text
  }

  private static long object(Map<?, ?> m) {
    long sum = 0;
    for (Map.Entry<?, ?> e : m.entrySet()) sum += entry(String.valueOf(e.getKey()), e.getValue());
    return mix(OBJECT ^ sum);
  }

  private static long array(List<?> l) {
    long h = ARRAY;
    for (Object o : l) h = mix(h * 31 + value(o));
    return mix(h + l.size());
  }

  private static long number(Number n) {
    BigDecimal d;
    if (n instanceof Integer || n instanceof Long || n instanceof Short || n instanceof Byte) {
      return mix(NUMBER ^ n.longValue());
    } else if (n instanceof Double || n instanceof Float) {
      double x = n.doubleValue();
      if (Double.isNaN(x) || Double.isInfinite(x)) return mix(NUMBER ^ Double.doubleToLongBits(x) ^ STRING);
      if (x == Math.rint(x) && Math.abs(x) < 0x1p62) return mix(NUMBER ^ (long) x);
      d = BigDecimal.valueOf(x);
    } else if (n instanceof BigInteger b) {
      d = new BigDecimal(b);
    } else {
      d = n instanceof BigDecimal b ? b : new BigDecimal(n.toString());
    }
    d = d.stripTrailingZeros();
    if (d.scale() <= 0 && d.abs().compareTo(BigDecimal.valueOf(1L << 62)) < 0) return mix(NUMBER ^ d.longValueExact());
    return mix(NUMBER ^ string(d.toString()) ^ ARRAY);
  }

  private static long string(CharSequence s) {
    long h = STRING;
    for (int i = 0; i < s.length(); i++) h = (h ^ s.charAt(i)) * 0x100000001b3L; // FNV-1a over UTF-16 units
    return mix(h ^ s.length());
  }

  /** SplitMix64's finaliser: every input bit reaches every output bit. */
  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }
}
