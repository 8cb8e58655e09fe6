package dev.inspection.admin;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/**
 * A console password kept as a slow hash: PBKDF2WithHmacSHA256 from the JDK, written
 * {@code pbkdf2$ITERATIONS$SALT$HASH} (salt and hash in base64). A configured plain password is hashed
 * once at start-up and the plain text dropped; a configured {@code pbkdf2$...} value is used as it is.
 * {@link #matches} costs one full derivation (about a tenth of a second): call it off the event loop.
 */
public final class PasswordHash {
  static final String PREFIX = "pbkdf2$";
  static final int ITERATIONS = 210_000;
  private static final int MIN_ITERATIONS = 10_000;
  private static final int BITS = 256;

  private final int iterations;
  private final byte[] salt;
  private final byte[] hash;

  private PasswordHash(int iterations, byte[] salt, byte[] hash) {
    this.iterations = iterations;
    this.salt = salt;
    this.hash = hash;
  }

  /** A new hash of {@code password} with a random salt. */
  public static PasswordHash of(String password) {
    byte[] salt = new byte[16];
    new SecureRandom().nextBytes(salt);
    return new PasswordHash(ITERATIONS, salt, derive(password, salt, ITERATIONS));
  }

  static boolean isEncoded(String value) {
    return value != null && value.startsWith(PREFIX);
  }

  /** Parses {@code pbkdf2$ITERATIONS$SALT$HASH}; an IllegalArgumentException says what is wrong (never echoing the value). */
  public static PasswordHash parse(String encoded) {
    String[] p = encoded.trim().split("\\$");
    if (p.length != 4 || !p[0].equals("pbkdf2")) throw new IllegalArgumentException("is not of the form pbkdf2$ITERATIONS$SALT$HASH");
    try {
      int n = Integer.parseInt(p[1]);
      byte[] salt = Base64.getDecoder().decode(p[2]);
      byte[] hash = Base64.getDecoder().decode(p[3]);
      if (n < MIN_ITERATIONS) throw new IllegalArgumentException("has fewer than " + MIN_ITERATIONS + " iterations");
      if (salt.length < 8 || hash.length < 16) throw new IllegalArgumentException("has a salt or hash that is too short");
      return new PasswordHash(n, salt, hash);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("has an iteration count that is not a number");
    } catch (IllegalArgumentException e) {
      throw e.getMessage() != null && e.getMessage().startsWith("has") ? e : new IllegalArgumentException("has a salt or hash that is not base64");
    }
  }

  public String encoded() {
    Base64.Encoder b = Base64.getEncoder().withoutPadding();
    return PREFIX + iterations + "$" + b.encodeToString(salt) + "$" + b.encodeToString(hash);
  }

  /** Whether {@code password} has this hash; the comparison takes constant time. Slow on purpose. */
  public boolean matches(String password) {
    return password != null && MessageDigest.isEqual(derive(password, salt, iterations), hash);
  }

  private static byte[] derive(String password, byte[] salt, int iterations) {
    PBEKeySpec spec = new PBEKeySpec(password.toCharArray(), salt, iterations, BITS);
    try {
      return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec).getEncoded();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("PBKDF2WithHmacSHA256 is not available in this JDK", e);
    } finally {
      spec.clearPassword();
    }
  }

  /** Reads a password from stdin (one line) and prints its {@code pbkdf2$...} value for console.password. */
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    System.err.println("password (one line, at least 12 characters):");
    String line = in.readLine();
    if (line == null || line.length() < 12) {
      System.err.println("no password of at least 12 characters on stdin");
      System.exit(2);
    }
    System.out.println(of(line).encoded());
  }
}
