package dev.inspection.state;

import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/**
 * The merge rules of one kind of status payload (DESIGN.md D5): a rule per named top-level field, and a default
 * for every other field. {@link #merge} is the in-memory twin of the SQL function {@code merge_payload(old, upd,
 * rules, default_rule)} of {@code V003__merge_payload.sql}, called with {@link #rulesJson()} and
 * {@code defaultRule().sqlName()}; both follow the table in {@link MergeRule}, and a field the update does not
 * carry is kept whatever its rule.
 *
 * <p>Folding a batch and then merging the fold onto the stored payload gives the same result as applying the
 * batch's updates one by one to it as long as MERGE fields only ever carry objects and MAX fields only numbers
 * (true of normalized hotel payloads, and of every all-REPLACE/COALESCE profile). A MERGE field set to a
 * non-object, or a MAX field to a non-number, inside a batch breaks that: the fold then cannot say "forget the
 * stored value" to a later object or number of the same batch.
 *
 * <p><b>Device time (seed 004's {@code WHERE EXCLUDED.ts_ms >= stored.ts_ms}).</b> A profile may name a
 * {@link #deviceTimeField}, the time the device itself put on the frame. An update whose device time is older
 * than the stored one changes nothing at all — whatever its probe seq, since a device's frames can reach the probe
 * out of order — so an old frame never rolls loops or the lock status back (history still keeps it). An update or
 * stored payload without a numeric device time is not guarded. Guarding whole updates means a batch can no longer
 * be folded into one update without knowing the stored time: the frames a fold from nothing takes
 * ({@link #notOlder}) are sent to the database as they are and applied one by one there
 * ({@code merge_payload_guarded} of {@code V012__hotel.sql}), which gives exactly {@link #fold} of everything.
 */
public record PayloadProfile(String name, Map<String, MergeRule> rules, MergeRule defaultRule,
    UnaryOperator<JsonObject> normalizer, String deviceTimeField) {

  /** A profile whose payloads are stored as they arrive. */
  public PayloadProfile(String name, Map<String, MergeRule> rules, MergeRule defaultRule) {
    this(name, rules, defaultRule, UnaryOperator.identity(), null);
  }

  /** A profile without a device time. */
  public PayloadProfile(String name, Map<String, MergeRule> rules, MergeRule defaultRule, UnaryOperator<JsonObject> normalizer) {
    this(name, rules, defaultRule, normalizer, null);
  }

  public PayloadProfile {
    if (normalizer == null) throw new IllegalArgumentException("payload profile " + name + ": the normalizer must not be null");
    if (name == null || name.isBlank()) throw new IllegalArgumentException("a payload profile needs a name");
    if (rules == null) throw new IllegalArgumentException("payload profile " + name + ": rules must not be null (use an empty map)");
    if (defaultRule == null) throw new IllegalArgumentException("payload profile " + name + ": the default rule must not be null");
    if (deviceTimeField != null && deviceTimeField.isBlank()) {
      throw new IllegalArgumentException("payload profile " + name + ": the device time field must be null or a field name");
    }
    TreeMap<String, MergeRule> sorted = new TreeMap<>();
    rules.forEach((field, rule) -> {
      if (field == null || rule == null) {
        throw new IllegalArgumentException("payload profile " + name + ": field '" + field + "' has rule " + rule + "; both are required");
      }
      sorted.put(field, rule);
    });
    rules = Collections.unmodifiableMap(sorted);
  }

  /**
   * The fields this profile stores from a raw payload (e.g. the hotel frames' lists keyed by loop); throws
   * IllegalArgumentException naming what does not fit, which the worker dead-letters as {@code bad_payload}.
   */
  public JsonObject normalize(JsonObject raw) {
    return normalizer.apply(raw);
  }

  public MergeRule ruleFor(String field) {
    return rules.getOrDefault(field, defaultRule);
  }

  /**
   * The payload after {@code update}: {@code old}'s fields, each field the update carries combined by its rule;
   * {@code old} unchanged when the update is {@link #older} than it. {@code old} may be null (no stored payload
   * yet). Neither input is modified and the result shares no mutable object or array with them.
   */
  public JsonObject merge(JsonObject old, JsonObject update) {
    if (update == null) throw new IllegalArgumentException("payload profile " + name + ": the update must not be null");
    JsonObject out = old == null ? new JsonObject() : old.copy();
    if (older(old, update)) return out;
    for (String field : update.fieldNames()) {
      Object newValue = update.getValue(field);
      MergeRule rule = ruleFor(field);
      if (rule.keepsOld(newValue)) continue;
      out.put(field, rule.combine(out.getValue(field), newValue));
    }
    return out;
  }

  /** The updates merged in order, starting from no stored payload; an empty list gives an empty object. */
  public JsonObject fold(List<JsonObject> updatesInOrder) {
    JsonObject acc = null;
    for (int i = 0; i < updatesInOrder.size(); i++) {
      JsonObject u = updatesInOrder.get(i);
      if (u == null) throw new IllegalArgumentException("payload profile " + name + ": update #" + i + " of the fold is null");
      acc = merge(acc, u);
    }
    return acc == null ? new JsonObject() : acc;
  }

  /**
   * True when both carry a numeric {@link #deviceTimeField} and the update's is smaller (a tie is not older, as in
   * seed 004). Always false for a profile without a device time.
   */
  public boolean older(JsonObject stored, JsonObject update) {
    if (deviceTimeField == null || stored == null || update == null) return false;
    BigDecimal was = MergeRule.number(stored.getValue(deviceTimeField));
    BigDecimal now = MergeRule.number(update.getValue(deviceTimeField));
    return was != null && now != null && now.compareTo(was) < 0;
  }

  /**
   * The updates a {@link #fold} from nothing takes, in order: those not {@link #older} than the newest device time
   * before them. Starting from any stored payload the fold takes a subset of these (a suffix), so applying exactly
   * these one by one onto the stored payload equals applying all of them. All of them for a profile without a
   * device time.
   */
  public List<JsonObject> notOlder(List<JsonObject> updatesInOrder) {
    if (deviceTimeField == null) return List.copyOf(updatesInOrder);
    List<JsonObject> taken = new ArrayList<>(updatesInOrder.size());
    BigDecimal newest = null;
    for (JsonObject u : updatesInOrder) {
      BigDecimal t = MergeRule.number(u.getValue(deviceTimeField));
      if (t != null && newest != null && t.compareTo(newest) < 0) continue;
      if (t != null) newest = t;
      taken.add(u);
    }
    return taken;
  }

  /** The per-field rules as the SQL function takes them, e.g. {@code {"dev_loops":"merge","ts_ms":"max"}}. */
  public JsonObject rulesJson() {
    JsonObject j = new JsonObject();
    rules.forEach((field, rule) -> j.put(field, rule.sqlName()));
    return j;
  }
}
