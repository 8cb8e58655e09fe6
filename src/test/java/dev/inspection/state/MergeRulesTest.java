package dev.inspection.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MergeRulesTest {
  /** One field per rule, REPLACE for the rest. */
  private static final PayloadProfile P = RandomPayloads.EVERY_RULE;

  private static JsonObject j(String json) {
    return new JsonObject(json);
  }

  @Test
  void replaceTakesTheNewValueEvenAJsonNull() {
    assertEquals(j("{\"r\":2}"), P.merge(j("{\"r\":1}"), j("{\"r\":2}")));
    assertEquals(j("{\"r\":null}"), P.merge(j("{\"r\":1}"), j("{\"r\":null}")));
    assertTrue(P.merge(j("{\"r\":1}"), j("{\"r\":null}")).containsKey("r"), "a replaced null is stored, not dropped");
    assertEquals(j("{\"r\":[3]}"), P.merge(j("{\"r\":{\"a\":1}}"), j("{\"r\":[3]}")));
    assertEquals(j("{\"r\":1}"), P.merge(null, j("{\"r\":1}")));
  }

  @Test
  void fieldsTheUpdateDoesNotCarryAreKeptWhateverTheirRule() {
    JsonObject old = j("{\"r\":1,\"m\":{\"a\":1},\"c\":2,\"x\":3,\"z\":null,\"other\":\"o\"}");
    assertEquals(old, P.merge(old, j("{}")));
    assertEquals(old.copy().put("new", 1), P.merge(old, j("{\"new\":1}")));
  }

  @Test
  void mergeCombinesObjectsOneLevelDeepLikeJsonbConcatenation() {
    JsonObject old = j("{\"m\":{\"a\":1,\"b\":{\"deep\":1,\"keep\":2},\"c\":3}}");
    JsonObject upd = j("{\"m\":{\"b\":{\"deep\":9},\"c\":null,\"d\":4}}");
    // b is replaced as a whole (one level only); c is set to null, not removed; a is kept.
    assertEquals(j("{\"m\":{\"a\":1,\"b\":{\"deep\":9},\"c\":null,\"d\":4}}"), P.merge(old, upd));
    assertEquals(j("{\"m\":{\"a\":1}}"), P.merge(j("{\"m\":{\"a\":1}}"), j("{\"m\":{}}")));
  }

  @Test
  void mergeTakesTheNewValueWhenEitherSideIsNotAnObject() {
    assertEquals(j("{\"m\":[2]}"), P.merge(j("{\"m\":[1]}"), j("{\"m\":[2]}")), "arrays are replaced, not concatenated");
    assertEquals(j("{\"m\":\"b\"}"), P.merge(j("{\"m\":\"a\"}"), j("{\"m\":\"b\"}")), "scalars are replaced, not made an array");
    assertEquals(j("{\"m\":[1]}"), P.merge(j("{\"m\":{\"a\":1}}"), j("{\"m\":[1]}")));
    assertEquals(j("{\"m\":{\"a\":1}}"), P.merge(j("{\"m\":[1]}"), j("{\"m\":{\"a\":1}}")));
    assertEquals(j("{\"m\":null}"), P.merge(j("{\"m\":{\"a\":1}}"), j("{\"m\":null}")), "a JSON null is a non-object too");
    assertEquals(j("{\"m\":{\"a\":1}}"), P.merge(j("{\"m\":null}"), j("{\"m\":{\"a\":1}}")));
    assertEquals(j("{\"m\":{\"a\":1}}"), P.merge(j("{}"), j("{\"m\":{\"a\":1}}")), "absent old: the new object");
  }

  @Test
  void coalesceKeepsTheStoredValueWhenTheNewOneIsNull() {
    assertEquals(j("{\"c\":1}"), P.merge(j("{\"c\":1}"), j("{\"c\":null}")));
    assertEquals(j("{\"c\":null}"), P.merge(j("{\"c\":null}"), j("{\"c\":null}")));
    JsonObject nothingStored = P.merge(j("{}"), j("{\"c\":null}"));
    assertFalse(nothingStored.containsKey("c"), "absent stays absent: " + nothingStored);
    assertFalse(P.merge(null, j("{\"c\":null}")).containsKey("c"));
  }

  @Test
  void coalesceTakesAnyNonNullValueIncludingFalseZeroAndEmpty() {
    assertEquals(j("{\"c\":false}"), P.merge(j("{\"c\":true}"), j("{\"c\":false}")));
    assertEquals(j("{\"c\":0}"), P.merge(j("{\"c\":1}"), j("{\"c\":0}")));
    assertEquals(j("{\"c\":{}}"), P.merge(j("{\"c\":{\"a\":1}}"), j("{\"c\":{}}")));
    assertEquals(j("{\"c\":\"\"}"), P.merge(j("{}"), j("{\"c\":\"\"}")));
  }

  @Test
  void maxKeepsTheGreaterNumberWhateverItsJavaType() {
    assertEquals(j("{\"x\":5}"), P.merge(j("{\"x\":5}"), j("{\"x\":4}")));
    assertEquals(j("{\"x\":6}"), P.merge(j("{\"x\":5}"), j("{\"x\":6}")));
    assertEquals(j("{\"x\":1745000000001}"), P.merge(j("{\"x\":1745000000001}"), j("{\"x\":1745000000000}")));
    assertEquals(j("{\"x\":2.5}"), P.merge(j("{\"x\":2}"), j("{\"x\":2.5}")));
    assertEquals(j("{\"x\":-1}"), P.merge(j("{\"x\":-1}"), j("{\"x\":-1.5}")));
    JsonObject mixed = new JsonObject().put("x", new BigDecimal("9007199254740993"));
    assertEquals(new BigDecimal("9007199254740993"), P.merge(mixed, new JsonObject().put("x", 9007199254740992L)).getValue("x"),
        "compared exactly, not through double");
    assertEquals(BigInteger.TEN.pow(20), P.merge(new JsonObject().put("x", Long.MAX_VALUE), new JsonObject().put("x", BigInteger.TEN.pow(20))).getValue("x"));
  }

  @Test
  void maxOnATieTakesTheNewValue() {
    JsonObject merged = P.merge(new JsonObject().put("x", 10), new JsonObject().put("x", 10.0));
    assertEquals(Double.class, merged.getValue("x").getClass());
  }

  @Test
  void maxTakesTheNewValueWhenEitherSideIsNotANumber() {
    assertEquals(j("{\"x\":\"late\"}"), P.merge(j("{\"x\":9}"), j("{\"x\":\"late\"}")));
    assertEquals(j("{\"x\":1}"), P.merge(j("{\"x\":\"9\"}"), j("{\"x\":1}")), "a numeric string is not a number");
    assertEquals(j("{\"x\":null}"), P.merge(j("{\"x\":9}"), j("{\"x\":null}")));
    assertEquals(j("{\"x\":1}"), P.merge(j("{\"x\":null}"), j("{\"x\":1}")));
    assertEquals(j("{\"x\":1}"), P.merge(j("{}"), j("{\"x\":1}")));
    assertEquals(j("{\"x\":false}"), P.merge(j("{\"x\":true}"), j("{\"x\":false}")));
    assertNull(MergeRule.number(Double.NaN));
  }

  @Test
  void mergeNeverModifiesItsInputsNorSharesObjectsWithThem() {
    JsonObject old = j("{\"m\":{\"a\":{\"n\":1}},\"r\":[1],\"keep\":{\"k\":1},\"x\":1,\"c\":2}");
    JsonObject upd = j("{\"m\":{\"b\":{\"n\":2}},\"r\":[2,{\"n\":3}],\"x\":5,\"c\":null,\"new\":{\"n\":4}}");
    JsonObject oldBefore = old.copy();
    JsonObject updBefore = upd.copy();
    JsonObject out = P.merge(old, upd);
    assertEquals(oldBefore, old);
    assertEquals(updBefore, upd);

    out.getJsonObject("m").getJsonObject("a").put("n", 100);
    out.getJsonObject("m").getJsonObject("b").put("n", 100);
    out.getJsonArray("r").getJsonObject(1).put("n", 100);
    out.getJsonObject("keep").put("k", 100);
    out.getJsonObject("new").put("n", 100);
    assertEquals(oldBefore, old, "the result shares nothing with old");
    assertEquals(updBefore, upd, "the result shares nothing with the update");
  }

  @Test
  void foldAppliesTheUpdatesInListOrder() {
    List<JsonObject> updates = List.of(j("{\"r\":1,\"m\":{\"a\":1},\"c\":1,\"x\":5}"), j("{\"r\":2,\"m\":{\"a\":2,\"b\":2},\"c\":null,\"x\":3}"),
        j("{\"r\":3,\"m\":{\"c\":3}}"));
    assertEquals(j("{\"r\":3,\"m\":{\"a\":2,\"b\":2,\"c\":3},\"c\":1,\"x\":5}"), P.fold(updates));
    List<JsonObject> reversed = new ArrayList<>(updates);
    Collections.reverse(reversed);
    assertEquals(j("{\"r\":1,\"m\":{\"a\":1,\"b\":2,\"c\":3},\"c\":1,\"x\":5}"), P.fold(reversed));
  }

  @Test
  void foldOfNoUpdatesIsAnEmptyPayload() {
    assertEquals(new JsonObject(), P.fold(List.of()));
  }

  @Test
  void foldIsMergeStepByStepFromNothing() {
    Random rnd = new Random(4242);
    for (int round = 0; round < 300; round++) {
      List<JsonObject> updates = new ArrayList<>();
      for (int i = rnd.nextInt(8); i > 0; i--) updates.add(RandomPayloads.anyUpdate(rnd));
      JsonObject step = null;
      for (JsonObject u : updates) step = P.merge(step, u);
      assertEquals(step == null ? new JsonObject() : step, P.fold(updates), "round " + round);
    }
  }

  @Test
  void aFoldedBatchMergedOntoTheStoredPayloadEqualsTheBatchStepByStepWhenMergeFieldsHoldObjectsAndMaxFieldsNumbers() {
    Random rnd = new Random(77);
    for (int round = 0; round < 500; round++) {
      JsonObject stored = typedUpdate(rnd);
      List<JsonObject> batch = new ArrayList<>();
      for (int i = rnd.nextInt(6); i > 0; i--) batch.add(typedUpdate(rnd));
      JsonObject stepByStep = stored;
      for (JsonObject u : batch) stepByStep = P.merge(stepByStep, u);
      assertEquals(stepByStep, P.merge(stored, P.fold(batch)), "round " + round + ": " + stored + " then " + batch);
    }
  }

  /** Documents the limit stated on {@link PayloadProfile}: a fold cannot carry "forget the stored object". */
  @Test
  void aFoldedBatchCannotForgetTheStoredObjectOnceAMergeFieldWasNullInsideIt() {
    JsonObject stored = j("{\"m\":{\"a\":1}}");
    List<JsonObject> batch = List.of(j("{\"m\":null}"), j("{\"m\":{\"b\":2}}"));
    JsonObject stepByStep = P.merge(P.merge(stored, batch.get(0)), batch.get(1));
    assertEquals(j("{\"m\":{\"b\":2}}"), stepByStep);
    assertEquals(j("{\"m\":{\"a\":1,\"b\":2}}"), P.merge(stored, P.fold(batch)));
    assertNotEquals(stepByStep, P.merge(stored, P.fold(batch)));
  }

  @Test
  void ruleNamesParseCaseInsensitivelyAndUnknownOnesAreRefusedWithTheKnownList() {
    assertEquals(MergeRule.MERGE, MergeRule.parse("merge"));
    assertEquals(MergeRule.COALESCE, MergeRule.parse("Coalesce"));
    assertEquals(MergeRule.MAX, MergeRule.parse("MAX"));
    for (MergeRule r : MergeRule.values()) assertEquals(r, MergeRule.parse(r.sqlName()));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MergeRule.parse("greatest"));
    assertEquals("unknown merge rule 'greatest'; known rules: replace, merge, coalesce, max", e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> MergeRule.parse(null));
    assertThrows(IllegalArgumentException.class, () -> MergeRule.parse(" max"));
  }

  @Test
  void rulesJsonNamesEachFieldsRuleInLowerCase() {
    assertEquals(j("{\"dev_loops\":\"merge\",\"faulty_device_count\":\"replace\",\"sys_lock_status\":\"coalesce\",\"ts_ms\":\"max\"}"),
        PayloadProfiles.HOTEL_ROOM.rulesJson());
    assertEquals(new JsonObject(), PayloadProfiles.DEFAULT.rulesJson());
  }

  @Test
  void theDefaultProfileReplacesEachFieldTheUpdateCarries() {
    PayloadProfile d = PayloadProfiles.DEFAULT;
    assertEquals(MergeRule.REPLACE, d.defaultRule());
    assertEquals(j("{\"status\":\"DOWN\",\"latency_ms\":null,\"seen\":{\"b\":2},\"kept\":1}"),
        d.merge(j("{\"status\":\"UP\",\"latency_ms\":12,\"seen\":{\"a\":1},\"kept\":1}"), j("{\"status\":\"DOWN\",\"latency_ms\":null,\"seen\":{\"b\":2}}")));
  }

  @Test
  void profilesAreFoundByTheirStoredNameAndAnUnknownNameListsTheKnownOnes() {
    assertEquals(PayloadProfiles.DEFAULT, PayloadProfiles.byName("default"));
    assertEquals(PayloadProfiles.HOTEL_ROOM, PayloadProfiles.byName("hotel_room"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PayloadProfiles.byName("hotel"));
    assertEquals("unknown payload profile 'hotel'; known profiles: default, hotel_room", e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> PayloadProfiles.byName(null));
  }

  @Test
  void aProfileRefusesMissingPartsAndCannotBeChangedAfterwards() {
    assertThrows(IllegalArgumentException.class, () -> new PayloadProfile("p", Map.of(), null));
    assertThrows(IllegalArgumentException.class, () -> new PayloadProfile("p", null, MergeRule.REPLACE));
    assertThrows(IllegalArgumentException.class, () -> new PayloadProfile(" ", Map.of(), MergeRule.REPLACE));
    HashMap<String, MergeRule> withNull = new HashMap<>();
    withNull.put("a", null);
    assertThrows(IllegalArgumentException.class, () -> new PayloadProfile("p", withNull, MergeRule.REPLACE));
    HashMap<String, MergeRule> rules = new HashMap<>(Map.of("a", MergeRule.MAX));
    PayloadProfile p = new PayloadProfile("p", rules, MergeRule.REPLACE);
    rules.put("a", MergeRule.REPLACE);
    assertEquals(MergeRule.MAX, p.ruleFor("a"));
    assertThrows(UnsupportedOperationException.class, () -> p.rules().put("b", MergeRule.MERGE));
    assertThrows(IllegalArgumentException.class, () -> p.merge(null, null));
  }

  /** Like {@link RandomPayloads#anyUpdate} but m only ever holds objects and x only numbers. */
  private static JsonObject typedUpdate(Random rnd) {
    JsonObject u = RandomPayloads.anyUpdate(rnd);
    if (u.containsKey("m") && !(u.getValue("m") instanceof JsonObject)) u.put("m", new JsonObject().put("k" + rnd.nextInt(4), rnd.nextInt(5)));
    if (u.containsKey("x") && MergeRule.number(u.getValue("x")) == null) u.put("x", rnd.nextInt(100));
    if (rnd.nextInt(4) == 0) u.put("r", new JsonArray().add(rnd.nextInt(3)));
    return u;
  }
}
