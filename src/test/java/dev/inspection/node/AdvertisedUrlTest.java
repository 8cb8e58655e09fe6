package dev.inspection.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.config.ConfigException;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class AdvertisedUrlTest {
  private static final Supplier<String> HOST = () -> "sched-1.example.net";
  private static final Supplier<String> NEVER = () -> {
    throw new AssertionError("the host name is looked up only for a wildcard bind address");
  };

  @Test
  void theConfiguredAdvertisedUrlWinsWithoutItsTrailingSlash() {
    assertEquals("https://scheduler.example.net", AdvertisedUrl.choose("https://scheduler.example.net/", "http", "0.0.0.0", 8080, NEVER));
    assertEquals("http://10.1.2.3:9000", AdvertisedUrl.choose(" http://10.1.2.3:9000 ", "http", "127.0.0.1", 8080, NEVER));
  }

  @Test
  void aSpecificBindAddressIsAdvertisedAsItIs() {
    assertEquals("http://127.0.0.1:8080", AdvertisedUrl.choose("", "http", "127.0.0.1", 8080, NEVER));
    assertEquals("https://10.0.0.5:8443", AdvertisedUrl.choose(null, "https", "10.0.0.5", 8443, NEVER));
    assertEquals("http://[::1]:8080", AdvertisedUrl.choose("", "http", "::1", 8080, NEVER));
  }

  @Test
  void aWildcardBindAddressIsReplacedByThisHostsName() {
    assertEquals("http://sched-1.example.net:8080", AdvertisedUrl.choose("", "http", "0.0.0.0", 8080, HOST));
    assertEquals("https://sched-1.example.net:8443", AdvertisedUrl.choose("", "https", "::", 8443, HOST));
    assertEquals("http://sched-1.example.net:8080", AdvertisedUrl.choose("", "http", "[::]", 8080, HOST));
    assertEquals("http://[fe80::1]:8080", AdvertisedUrl.choose("", "http", "0.0.0.0", 8080, () -> "fe80::1"));
  }

  @Test
  void theLocalHostNameIsNeverAWildcard() {
    String name = AdvertisedUrl.localHostName();
    assertFalse(name.isBlank());
    assertFalse(AdvertisedUrl.isWildcard(name), name);
  }

  @Test
  void onlyAnAbsoluteHttpBaseUrlIsAccepted() {
    AdvertisedUrl.check("");
    AdvertisedUrl.check("https://sched-1.example.net:8443");
    AdvertisedUrl.check("http://10.0.0.5:8080/");
    for (String bad : new String[] {"sched-1:8080", "ftp://x", "http://", "http://x:8080/?a=b", "http://u:p@x:8080"}) {
      ConfigException e = assertThrows(ConfigException.class, () -> AdvertisedUrl.check(bad), bad);
      assertTrue(e.getMessage().contains("http.advertised.url"), e.getMessage());
    }
  }
}
