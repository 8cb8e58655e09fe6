package dev.inspection.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.SslMode;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** pg.ssl.mode and pg.tls.ca become the client's TLS options (the connections themselves: TlsIT). */
class DbTlsTest {
  private static PgOptions pg(String mode, String ca) {
    return new PgOptions("db.example", 5432, "test", "u", "", "public", mode, ca, 1000, "t");
  }

  @Test
  void verifyFullTrustsOnlyTheGivenCaAndChecksTheHostName() {
    PgConnectOptions o = Db.connectOptions(pg("verify-full", "/etc/ca.pem"));
    assertEquals(SslMode.VERIFY_FULL, o.getSslMode());
    ClientSSLOptions ssl = o.getSslOptions();
    assertEquals("HTTPS", ssl.getHostnameVerificationAlgorithm());
    assertFalse(ssl.isTrustAll());
    assertEquals(java.util.List.of("/etc/ca.pem"), ((PemTrustOptions) ssl.getTrustOptions()).getCertPaths());
  }

  @Test
  void verifyCaChecksTheChainButNotTheName() {
    PgConnectOptions o = Db.connectOptions(pg("verify-ca", ""));
    assertEquals(SslMode.VERIFY_CA, o.getSslMode());
    assertEquals("", o.getSslOptions().getHostnameVerificationAlgorithm());
    assertFalse(o.getSslOptions().isTrustAll());
    assertTrue(o.getSslOptions().getTrustOptions() != null, "empty pg.tls.ca: the JVM trust store");
  }

  @Test
  void requireOnlyEncryptsUnlessACaIsGivenAndDisableIsPlain() {
    assertTrue(Db.connectOptions(pg("require", "")).getSslOptions().isTrustAll());
    assertFalse(Db.connectOptions(pg("require", "/etc/ca.pem")).getSslOptions().isTrustAll());
    PgConnectOptions plain = Db.connectOptions(pg("disable", ""));
    assertEquals(SslMode.DISABLE, plain.getSslMode());
    assertTrue(plain.getSslOptions() == null || !plain.getSslOptions().isTrustAll(), "no trust-all on a plain connection");
  }

  @Test
  void anUnknownModeAMissingCaAndTheOldKeyAreRefusedNamingTheKey(@TempDir Path dir) {
    ConfigException mode = assertThrows(ConfigException.class, () -> PgOptions.from(Config.of(Map.of("pg.ssl.mode", "true"))));
    assertTrue(mode.getMessage().startsWith("pg.ssl.mode"), mode.getMessage());
    ConfigException ca = assertThrows(ConfigException.class,
        () -> PgOptions.validated(Config.of(Map.of("pg.ssl.mode", "verify-full", "pg.tls.ca", dir.resolve("none.pem").toString()))));
    assertTrue(ca.getMessage().startsWith("pg.tls.ca"), ca.getMessage());
    ConfigException old = assertThrows(ConfigException.class, () -> Config.of(Map.of("pg.ssl", "true")));
    assertTrue(old.getMessage().contains("pg.ssl.mode"), old.getMessage());
  }
}
