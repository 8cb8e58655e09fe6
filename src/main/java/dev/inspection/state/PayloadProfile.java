package dev.inspection.state;

import io.vertx.core.json.JsonObject;
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
 */
public record PayloadProfile(String name, Map<String, MergeRule> rules, MergeRule defaultRule,
    UnaryOperator<JsonObject> normalizer) {

  /** A profile whose payloads are stored as they arrive. */
  public PayloadProfile(String name, Map<String, MergeRule> rules, MergeRule defaultRule) {
    this(name, rules, defaultRule, UnaryOperator.identity());
  }

  public PayloadProfile {
    if (normalizer == null) throw new IllegalArgumentException("payload profile " + name + ": the normalizer must not be null");
    if (name == null || name.isBlank()) throw new IllegalArgumentException("a payload profile needs a name");
    if (rules == null) throw new IllegalArgumentException("payload profile " + name + ": rules must not be null (use an empty map)");
    if (defaultRule == null) throw new IllegalArgumentException("payload profile " + name + ": the default rule must not be null");
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
   * The payload after {@code update}: {@code old}'s fields, each field the update carries combined by its rule.
   * {@code old} may be null (no stored payload yet). Neither input is modified and the result shares no mutable
   * object or array with them.
   */
  public JsonObject merge(JsonObject old, JsonObject update) {
    if (update == null) throw new IllegalArgumentException("payload profile " + name + ": the update must not be null");
    JsonObject out = old == null ? new JsonObject() : old.copy();
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

  /** The per-field rules as the SQL function takes them, e.g. {@code {"dev_loops":"merge","ts_ms":"max"}}. */
  public JsonObject rulesJson() {
    JsonObject j = new JsonObject();
    rules.forEach((field, rule) -> j.put(field, rule.sqlName()));
    return j;
  }
}
