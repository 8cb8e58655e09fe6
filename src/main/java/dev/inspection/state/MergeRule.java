package dev.inspection.state;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * How one status field of a stored payload combines with the same field of an update (DESIGN.md D5).
 * The rules only decide fields the update carries; a field the update does not carry is always kept.
 * {@code merge_payload} in {@code db/migration/V003__merge_payload.sql} implements the same table, case for
 * case, so the in-memory fold of a batch and the SQL upsert agree:
 *
 * <table>
 *   <caption>old = stored value (absent, JSON null or a value), new = the update's value (JSON null or a value)</caption>
 *   <tr><th>rule</th><th>result</th></tr>
 *   <tr><td>REPLACE</td><td>new, a JSON null included</td></tr>
 *   <tr><td>MERGE</td><td>both objects: {@code old || new} one level deep (old's keys, overwritten by new's,
 *       a JSON null value included); otherwise new. Unlike {@code ||}, two arrays or two scalars are
 *       <em>not</em> concatenated: the new value replaces the old one.</td></tr>
 *   <tr><td>COALESCE</td><td>new is JSON null: old unchanged (an absent field stays absent); otherwise new</td></tr>
 *   <tr><td>MAX</td><td>both numbers: the numerically greater, new on a tie; otherwise (old absent, either side
 *       null or not a number) new</td></tr>
 * </table>
 */
public enum MergeRule {
  REPLACE,
  MERGE,
  COALESCE,
  MAX;

  /** The lower-case name used in configuration, in {@link PayloadProfile#rulesJson()} and by the SQL function. */
  public String sqlName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Case-insensitive; anything else is refused with the list of known rules. */
  public static MergeRule parse(String name) {
    if (name != null) {
      String lower = name.toLowerCase(Locale.ROOT);
      for (MergeRule r : values()) {
        if (r.sqlName().equals(lower)) return r;
      }
    }
    throw new IllegalArgumentException("unknown merge rule " + (name == null ? "null" : "'" + name + "'") + "; known rules: "
        + Arrays.stream(values()).map(MergeRule::sqlName).collect(Collectors.joining(", ")));
  }

  /** True when an update carrying {@code newValue} leaves the stored field exactly as it is (present or absent). */
  boolean keepsOld(Object newValue) {
    return this == COALESCE && newValue == null;
  }

  /**
   * The value stored for a field the update carries, unless {@link #keepsOld} says to leave the field alone.
   * {@code oldValue} is null both when the field is absent and when it holds JSON null: no rule tells them apart
   * here (only COALESCE does, and it does so by not touching the field). Returns fresh copies, never the inputs.
   */
  Object combine(Object oldValue, Object newValue) {
    return switch (this) {
      case REPLACE, COALESCE -> copyOf(newValue);
      case MERGE -> {
        if (oldValue instanceof JsonObject o && newValue instanceof JsonObject n) {
          JsonObject merged = o.copy();
          for (String key : n.fieldNames()) merged.put(key, copyOf(n.getValue(key)));
          yield merged;
        }
        yield copyOf(newValue);
      }
      case MAX -> {
        BigDecimal o = number(oldValue);
        BigDecimal n = number(newValue);
        yield o != null && n != null && o.compareTo(n) > 0 ? copyOf(oldValue) : copyOf(newValue);
      }
    };
  }

  /**
   * The exact value of a JSON number, or null for anything else. A double is read through its shortest decimal
   * form, which is the text it is encoded as, so the comparison matches PostgreSQL's {@code numeric} one.
   * NaN and infinities cannot be written as JSON and count as not a number.
   */
  static BigDecimal number(Object v) {
    if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) return BigDecimal.valueOf(((Number) v).longValue());
    if (v instanceof BigDecimal b) return b;
    if (v instanceof BigInteger b) return new BigDecimal(b);
    if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      return Double.isFinite(d) ? new BigDecimal(v.toString()) : null;
    }
    return null;
  }

  /** A deep copy of a JSON value, so a result never shares a mutable object or array with an input. */
  static Object copyOf(Object v) {
    if (v instanceof JsonObject o) return o.copy();
    if (v instanceof JsonArray a) return a.copy();
    if (v instanceof byte[] b) return b.clone();
    return v;
  }
}
