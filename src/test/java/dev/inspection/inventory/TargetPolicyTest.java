package dev.inspection.inventory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import io.vertx.core.json.JsonObject;
import java.net.InetAddress;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TargetPolicyTest {
  private static final TargetPolicy DEFAULTS = TargetPolicy.of("", Keys.PROBE_TARGET_DENY.defaultValue(), "allow", "deny");

  private static InetAddress ip(String s) throws Exception {
    return InetAddress.getByName(s);
  }

  @Test
  void theDefaultsDenyLinkLocalAndMetadataAddressesAndNothingElse() throws Exception {
    assertTrue(DEFAULTS.refusal(ip("169.254.169.254")).contains("169.254.0.0/16"));
    assertTrue(DEFAULTS.refusal(ip("fe80::1")).contains("fe80::/10"));
    assertTrue(DEFAULTS.refusal(ip("100.100.100.200")) != null);
    assertTrue(DEFAULTS.refusal(ip("fd00:ec2::254")) != null);
    assertTrue(DEFAULTS.refusal(ip("::ffff:169.254.169.254")) != null, "an IPv4-mapped address is judged as IPv4");
    assertNull(DEFAULTS.refusal(ip("10.1.2.3")));
    assertNull(DEFAULTS.refusal(ip("127.0.0.1")));
    assertNull(DEFAULTS.refusal(ip("100.100.100.201")));
    assertNull(DEFAULTS.refusal(ip("2001:db8::1")));
  }

  @Test
  void anAllowListAdmitsOnlyItsRangesAndDenyWinsOverAllow() throws Exception {
    TargetPolicy p = TargetPolicy.of("10.20.0.0/16, 192.168.5.7", "10.20.9.0/24", "allow", "deny");
    assertNull(p.refusal(ip("10.20.1.1")));
    assertNull(p.refusal(ip("192.168.5.7")));
    assertTrue(p.refusal(ip("192.168.5.8")).contains("outside the allowed ranges"));
    assertTrue(p.refusal(ip("10.20.9.9")).contains("denied range 10.20.9.0/24"));
    assertTrue(TargetPolicy.of("10.0.0.0/9", "", "a", "d").refusal(ip("10.128.0.1")) != null, "a prefix that is not a whole byte");
    assertNull(TargetPolicy.of("10.0.0.0/9", "", "a", "d").refusal(ip("10.127.255.255")));
  }

  @Test
  void literalsAreJudgedAtImportAndNamesAreLeftToTheProbe() {
    assertTrue(DEFAULTS.refusalOfLiteral("169.254.169.254") != null);
    assertTrue(DEFAULTS.refusalOfLiteral("[fe80::1]") != null);
    assertNull(DEFAULTS.refusalOfLiteral("metadata.google.internal"), "a name is resolved and judged by the probe");
    assertNull(DEFAULTS.refusalOfLiteral(null));
    String r = DEFAULTS.refusalOfSpec(new JsonObject().put("url", "http://169.254.169.254/latest/meta-data/"));
    assertTrue(r.startsWith("check_spec: target 169.254.169.254 is in the denied range"), r);
  }

  @Test
  void aBadRangeStopsStartUpNamingTheKey() {
    ConfigException e = assertThrows(ConfigException.class, () -> TargetPolicy.from(Config.of(Map.of("probe.target.deny", "10.0.0.0/33"))));
    assertTrue(e.getMessage().startsWith("probe.target.deny"), e.getMessage());
    e = assertThrows(ConfigException.class, () -> TargetPolicy.from(Config.of(Map.of("probe.target.allow", "intranet"))));
    assertTrue(e.getMessage().startsWith("probe.target.allow: 'intranet'"), e.getMessage());
    assertEquals(null, TargetPolicy.from(Config.of(Map.of())).refusal(InetAddress.getLoopbackAddress()));
  }
}
