package dev.inspection.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PayloadDigestTest {
  private static long d(String json) {
    return PayloadDigest.of(new JsonObject(json), Set.of());
  }

  @Test
  void equalPayloadsDigestEquallyWhateverTheirFieldOrderOrNumberSpelling() {
    assertEquals(d("{\"a\":1,\"b\":{\"x\":[1,2],\"y\":\"s\"}}"), d("{\"b\":{\"y\":\"s\",\"x\":[1.0,2e0]},\"a\":1}"));
    assertEquals(d("{\"v\":2.5}"), d("{\"v\":25e-1}"));
  }

  @Test
  void anyDifferenceChangesTheDigest() {
    long base = d("{\"status\":\"UP\",\"loops\":{\"1\":{\"s\":0}},\"list\":[1,2]}");
    assertNotEquals(base, d("{\"status\":\"DOWN\",\"loops\":{\"1\":{\"s\":0}},\"list\":[1,2]}"));
    assertNotEquals(base, d("{\"status\":\"UP\",\"loops\":{\"1\":{\"s\":1}},\"list\":[1,2]}"));
    assertNotEquals(base, d("{\"status\":\"UP\",\"loops\":{\"1\":{\"s\":0}},\"list\":[2,1]}"), "array order counts");
    assertNotEquals(base, d("{\"status\":\"UP\",\"loops\":{\"1\":{\"s\":0}},\"list\":[1,2],\"x\":null}"), "an added null counts");
    assertNotEquals(d("{\"a\":\"1\"}"), d("{\"a\":1}"), "a string is not a number");
    assertNotEquals(d("{\"a\":{\"b\":1}}"), d("{\"b\":{\"a\":1}}"), "keys are bound to their values");
  }

  @Test
  void ignoredTopLevelFieldsDoNotCountButNestedOnesOfTheSameNameDo() {
    Set<String> ignored = Set.of("latency_ms");
    assertEquals(PayloadDigest.of(new JsonObject().put("status", "UP").put("latency_ms", 3), ignored),
        PayloadDigest.of(new JsonObject().put("status", "UP").put("latency_ms", 40), ignored));
    assertNotEquals(PayloadDigest.of(new JsonObject().put("n", new JsonObject().put("latency_ms", 3)), ignored),
        PayloadDigest.of(new JsonObject().put("n", new JsonObject().put("latency_ms", 4)), ignored));
  }

  @Test
  void tenThousandSmallPayloadsGiveTenThousandDigests() {
    Set<Long> seen = new HashSet<>();
    for (int i = 0; i < 10_000; i++) seen.add(PayloadDigest.of(new JsonObject().put("status", i % 2 == 0 ? "UP" : "DOWN").put("n", i)
        .put("a", new JsonArray().add(i % 7)), Set.of()));
    assertEquals(10_000, seen.size());
  }
}
