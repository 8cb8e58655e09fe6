package dev.inspection.node;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import io.vertx.core.Future;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CredentialPolicyTest {
  private static Config c(String... kv) {
    Map<String, String> m = new java.util.HashMap<>();
    for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
    return Config.of(m);
  }

  @Test
  void guestIsRefusedByDefaultNamingTheKeyAndTheWayOut() {
    ConfigException e = assertThrows(ConfigException.class, () -> CredentialPolicy.checkRabbit(c()));
    assertTrue(e.getMessage().contains("rabbit.user") && e.getMessage().contains("security.allow.insecure.credentials=true"), e.getMessage());
  }

  @Test
  void guestPassesInDemoModeOrWhenAllowedAndAnotherUserAlways() {
    assertDoesNotThrow(() -> CredentialPolicy.checkRabbit(c("demo.mode", "true")));
    assertDoesNotThrow(() -> CredentialPolicy.checkRabbit(c("security.allow.insecure.credentials", "true")));
    assertDoesNotThrow(() -> CredentialPolicy.checkRabbit(c("rabbit.user", "inspection")));
  }

  @Test
  void aSuperuserIsRefusedUnlessAllowed() {
    Future<Void> refused = CredentialPolicy.decide(true, c());
    assertTrue(refused.failed() && refused.cause() instanceof ConfigException);
    assertTrue(refused.cause().getMessage().contains("pg.user 'postgres'") && refused.cause().getMessage().contains("security.allow.insecure.credentials"),
        refused.cause().getMessage());
    assertTrue(CredentialPolicy.decide(false, c()).succeeded());
    assertTrue(CredentialPolicy.decide(true, c("demo.mode", "true")).succeeded());
    assertTrue(CredentialPolicy.decide(true, c("security.allow.insecure.credentials", "true")).succeeded());
  }
}
