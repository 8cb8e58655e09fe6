package dev.inspection.admin;

import dev.inspection.common.Pem;
import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PemKeyCertOptions;
import java.nio.charset.StandardCharsets;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import javax.net.ssl.X509KeyManager;

/**
 * HTTPS for the node's HTTP port: {@code http.tls.cert} and {@code http.tls.key} (PEM files). Both set:
 * the port speaks TLS only (plain HTTP to it fails) and the console's session cookie is {@code Secure}.
 * Neither set: plain HTTP. Anything else stops start-up with a {@link ConfigException} naming the key.
 */
public final class HttpTls {
  private HttpTls() {}

  /** Whether HTTPS is configured (either key set; {@link #check} refuses one without the other); does not read the files. */
  public static boolean enabled(Config c) {
    return !c.get(Keys.HTTP_TLS_CERT).isBlank() || !c.get(Keys.HTTP_TLS_KEY).isBlank();
  }

  /** "https" or "http": how this node's HTTP port is reached. */
  public static String scheme(Config c) {
    return enabled(c) ? "https" : "http";
  }

  /** Checks the files without a Vert.x instance (start-up validation): both given, readable, PEM. Blocking (file reads). */
  public static void check(Config c) {
    if (!enabled(c)) return;
    String cert = c.get(Keys.HTTP_TLS_CERT).trim();
    String key = c.get(Keys.HTTP_TLS_KEY).trim();
    if (cert.isEmpty()) throw new ConfigException("http.tls.cert is empty but http.tls.key is set: give both PEM files for HTTPS, or neither for plain HTTP");
    if (key.isEmpty()) throw new ConfigException("http.tls.key is empty but http.tls.cert is set: give the PEM file of the certificate's private key");
    Pem.certificates(Keys.HTTP_TLS_CERT.name(), cert);
    Pem.privateKey(Keys.HTTP_TLS_KEY.name(), key);
  }

  /** The server options: TLS with the configured certificate and key, or plain. Blocking (file reads): call off the event loop. */
  static HttpServerOptions serverOptions(Config c, Vertx vertx) {
    // no h2c upgrade: a client asking for it (Java's HttpClient does by default) got a 101 and then an HTTP/2
    // framing error for /metrics (47 KB) — one hung StorageIT for 10 minutes; plain HTTP/1.1 answers it instead
    HttpServerOptions o = new HttpServerOptions().setHttp2ClearTextEnabled(false);
    if (!enabled(c)) return o;
    check(c);
    PemKeyCertOptions pem = new PemKeyCertOptions().setCertPath(c.get(Keys.HTTP_TLS_CERT).trim()).setKeyPath(c.get(Keys.HTTP_TLS_KEY).trim());
    String problem;
    try {
      // parse both now, so a bad key is a start-up error naming the key, not a failed handshake later
      problem = keyMatchesCertificate((X509KeyManager) pem.getKeyManagerFactory(vertx).getKeyManagers()[0]) ? null
          : "the private key does not belong to the certificate";
    } catch (Exception e) {
      problem = e.toString();
    }
    if (problem != null) {
      throw new ConfigException("http.tls.key / http.tls.cert cannot be used together (" + problem + "): give the PEM private key"
          + " (PKCS#8 or PKCS#1 RSA) that belongs to the certificate");
    }
    return o.setSsl(true).setKeyCertOptions(pem);
  }

  /** Signs a probe with the key and verifies it with the certificate's public key. */
  private static boolean keyMatchesCertificate(X509KeyManager km) throws Exception {
    for (String type : new String[] {"RSA", "EC"}) {
      String[] aliases = km.getServerAliases(type, null);
      if (aliases == null) continue;
      for (String alias : aliases) {
        PrivateKey key = km.getPrivateKey(alias);
        X509Certificate[] chain = km.getCertificateChain(alias);
        if (key == null || chain == null || chain.length == 0) continue;
        String algorithm = type.equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA";
        byte[] probe = "inspection-node http.tls key check".getBytes(StandardCharsets.UTF_8);
        Signature sign = Signature.getInstance(algorithm);
        sign.initSign(key);
        sign.update(probe);
        Signature verify = Signature.getInstance(algorithm);
        verify.initVerify(chain[0].getPublicKey());
        verify.update(probe);
        return verify.verify(sign.sign());
      }
    }
    return false;
  }
}
