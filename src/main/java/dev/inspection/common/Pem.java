package dev.inspection.common;

import dev.inspection.config.ConfigException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * PEM files named by configuration keys (CA bundles, certificates, private keys), read at start-up so
 * that a missing or unreadable file stops the node with a {@link ConfigException} naming the key.
 */
public final class Pem {
  private Pem() {}

  /** The certificates in the PEM file {@code path} (at least one), or a ConfigException naming {@code key}. */
  public static List<X509Certificate> certificates(String key, String path) {
    byte[] pem = read(key, path, "CERTIFICATE");
    try {
      List<X509Certificate> out = new ArrayList<>();
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(pem))) {
        out.add((X509Certificate) c);
      }
      if (out.isEmpty()) throw new GeneralSecurityException("no certificate in it");
      return out;
    } catch (GeneralSecurityException | RuntimeException e) {
      throw new ConfigException(key + ": '" + path + "' is not a PEM certificate file (" + e.getMessage() + "): give the path of a PEM file"
          + " with -----BEGIN CERTIFICATE----- blocks");
    }
  }

  /** Checks that {@code path} is a readable PEM private key (PKCS#8, or PKCS#1 RSA / SEC1 EC); a ConfigException naming {@code key} if not. */
  public static byte[] privateKey(String key, String path) {
    return read(key, path, "PRIVATE KEY");
  }

  /**
   * An SSL context whose trust is the CA certificates in the PEM file {@code caPath}, or the JVM's
   * trust store (cacerts) when {@code caPath} is empty. Never one that trusts every certificate.
   */
  public static SSLContext trusting(String key, String caPath) {
    try {
      TrustManagerFactory tmf;
      if (caPath == null || caPath.isBlank()) {
        tmf = jvmTrustStore();
      } else {
        tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
        ks.load(null, null);
        int i = 0;
        for (X509Certificate c : certificates(key, caPath)) ks.setCertificateEntry("ca-" + i++, c);
        tmf.init(ks);
      }
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, tmf.getTrustManagers(), null);
      return ctx;
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalStateException("cannot build a TLS context for " + key + ": " + e.getMessage(), e);
    }
  }

  /** The JVM's own trust store (cacerts): what a client trusts when no CA file is configured. */
  public static TrustManagerFactory jvmTrustStore() {
    try {
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init((KeyStore) null);
      return tmf;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot read the JVM's trust store: " + e.getMessage(), e);
    }
  }

  private static byte[] read(String key, String path, String block) {
    if (path == null || path.isBlank()) throw new ConfigException(key + " is empty: give the path of a PEM file");
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(Path.of(path));
    } catch (IOException | RuntimeException e) {
      throw new ConfigException(key + ": cannot read '" + path + "' (" + e + "): give the path of a readable PEM file");
    }
    if (!new String(bytes, StandardCharsets.US_ASCII).contains(block + "-----")) {
      throw new ConfigException(key + ": '" + path + "' holds no PEM " + block + " block (-----BEGIN ..." + block + "-----)");
    }
    return bytes;
  }
}
