package dev.inspection.inventory;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

class CheckSpecTest {
  private static String refusal(String type, JsonObject spec) {
    return assertThrows(IllegalArgumentException.class, () -> CheckSpec.validate(type, spec)).getMessage();
  }

  @Test
  void goodSpecsPass() {
    assertDoesNotThrow(() -> CheckSpec.validate("sim", new JsonObject()));
    assertDoesNotThrow(() -> CheckSpec.validate("sim", new JsonObject().put("fail_rate", 0)));
    assertDoesNotThrow(() -> CheckSpec.validate("tcp", new JsonObject().put("host", "db-1.example.net").put("port", 5432).put("timeout_ms", 500)));
    assertDoesNotThrow(() -> CheckSpec.validate("tcp", new JsonObject().put("host", "[2001:db8::1]").put("port", 22)));
    assertDoesNotThrow(() -> CheckSpec.validate("http", new JsonObject().put("url", "https://example.net:8443/health").put("expect_status", 204)));
  }

  @Test
  void everyRefusalNamesTheField() {
    assertTrue(refusal("tcp", new JsonObject().put("host", "h")).contains("check_spec.port"));
    assertTrue(refusal("tcp", new JsonObject().put("host", "h").put("port", 0)).contains("check_spec.port must be a whole number 1..65535, was 0"));
    assertTrue(refusal("tcp", new JsonObject().put("host", "h").put("port", "22")).contains("check_spec.port"));
    assertTrue(refusal("tcp", new JsonObject().put("host", "h").put("port", 22.5)).contains("check_spec.port"));
    assertTrue(refusal("tcp", new JsonObject().put("port", 22)).contains("check_spec.host"));
    assertTrue(refusal("tcp", new JsonObject().put("host", "a b").put("port", 22)).contains("check_spec.host"));
    assertTrue(refusal("tcp", new JsonObject().put("host", "h").put("port", 22).put("timeout_ms", 10)).contains("check_spec.timeout_ms"));
    assertTrue(refusal("http", new JsonObject()).contains("check_spec.url"));
    assertTrue(refusal("http", new JsonObject().put("url", "file:///etc/passwd")).contains("check_spec.url must start with http"));
    assertTrue(refusal("http", new JsonObject().put("url", "http://user:pw@h/")).contains("user or password"));
    assertTrue(refusal("http", new JsonObject().put("url", "http:///nohost")).contains("no host"));
    assertTrue(refusal("http", new JsonObject().put("url", "http://h/").put("expect_status", 42)).contains("check_spec.expect_status"));
    assertTrue(refusal("sim", new JsonObject().put("fail_rate", 2)).contains("check_spec.fail_rate"));
  }

  @Test
  void unknownFieldsAndTypesAreRefused() {
    String e = refusal("tcp", new JsonObject().put("host", "h").put("port", 22).put("timeout", 5));
    assertTrue(e.contains("check_spec.timeout is not a field of a tcp check"), e);
    assertTrue(refusal("snmp", new JsonObject()).contains("check_type"));
  }

  @Test
  void anIcmpSpecNeedsAHostAndBoundsItsEchoes() {
    assertDoesNotThrow(() -> CheckSpec.validate("icmp", new JsonObject().put("host", "10.0.0.1")));
    assertDoesNotThrow(() -> CheckSpec.validate("icmp", new JsonObject().put("host", "gw.example").put("count", 10).put("interval_ms", 10).put("timeout_ms", 100)));
    assertTrue(refusal("icmp", new JsonObject()).contains("check_spec.host"));
    assertTrue(refusal("icmp", new JsonObject().put("host", "h").put("count", 0)).contains("check_spec.count must be a whole number 1..10"));
    assertTrue(refusal("icmp", new JsonObject().put("host", "h").put("count", 11)).contains("check_spec.count"));
    assertTrue(refusal("icmp", new JsonObject().put("host", "h").put("interval_ms", 5)).contains("check_spec.interval_ms"));
    assertTrue(refusal("icmp", new JsonObject().put("host", "h").put("timeout_ms", 60_001)).contains("check_spec.timeout_ms"));
    assertTrue(refusal("icmp", new JsonObject().put("host", "h").put("port", 7)).contains("check_spec.port is not a field of a icmp check"));
  }

  @Test
  void theTargetsOfASpecAreItsHostAndItsUrlsHost() {
    assertEquals(List.of("10.0.0.1"), CheckSpec.targets(new JsonObject().put("host", "10.0.0.1").put("port", 1)));
    assertEquals(List.of("169.254.169.254"), CheckSpec.targets(new JsonObject().put("url", "http://169.254.169.254/latest")));
    assertEquals(List.of(), CheckSpec.targets(new JsonObject().put("url", "::not a url")));
  }

  @Test
  void aDeviceIsReadWithItsSpecChecked() {
    JsonObject j = new JsonObject().put("device_id", "d").put("check_type", "tcp").put("check_spec", new JsonObject().put("host", "h"));
    String e = assertThrows(IllegalArgumentException.class, () -> Device.fromJson(j, "default", 1000)).getMessage();
    assertTrue(e.contains("check_spec.port"), e);
  }
}
