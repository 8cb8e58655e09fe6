package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Certificates made for one test run with openssl: a CA, a server certificate it signs for the name
 * "localhost" only (no IP address, so 127.0.0.1 is a host-name mismatch), and a second, unrelated CA
 * that signs nothing the servers use. Fresh keys on every run.
 */
final class TestPki {
  /** Where the local PostgreSQL reads its server certificate and key from once {@link #enablePostgresTls()} ran. */
  static final Path PG_TLS_DIR = Path.of("/var/lib/postgresql/inspection-test-tls");

  final Path dir;
  final Path caCert;
  final Path caKey;
  final Path otherCaCert;
  final Path serverCert;
  final Path serverKey;

  private TestPki(Path dir) {
    this.dir = dir;
    this.caCert = dir.resolve("ca.crt");
    this.caKey = dir.resolve("ca.key");
    this.otherCaCert = dir.resolve("other-ca.crt");
    this.serverCert = dir.resolve("server.crt");
    this.serverKey = dir.resolve("server.key");
  }

  static TestPki create(Path dir) throws Exception {
    Files.createDirectories(dir);
    TestPki p = new TestPki(dir);
    p.ca("ca", "inspection test CA");
    p.ca("other-ca", "inspection test CA (not the servers')");
    Files.writeString(dir.resolve("server.ext"), "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n"
        + "keyUsage=critical,digitalSignature,keyEncipherment\n");
    p.openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost");
    p.openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
        "-extfile", "server.ext", "-out", "server.crt");
    return p;
  }

  private void ca(String name, String cn) throws Exception {
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".crt", "-days", "2", "-subj", "/CN=" + cn,
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
  }

  private void openssl(String... args) throws Exception {
    List<String> cmd = new java.util.ArrayList<>(List.of("openssl"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) throw new IOException("openssl " + String.join(" ", args) + " failed: " + out);
  }

  /**
   * Turns TLS on in the local PostgreSQL with this run's server certificate: copies certificate and key
   * to {@link #PG_TLS_DIR} (owned by the postgres OS user, key mode 0600, as PostgreSQL demands), points
   * {@code ssl_cert_file}/{@code ssl_key_file} there with ALTER SYSTEM, sets {@code ssl = on} and reloads.
   * Idempotent; TLS stays on afterwards (plain connections keep working: pg_hba's "host" lines match both).
   * Needs root (or the postgres user) on the machine that runs PostgreSQL, and a superuser connection.
   */
  void enablePostgresTls() throws Exception {
    try {
      Files.createDirectories(PG_TLS_DIR);
      Path crt = PG_TLS_DIR.resolve("server.crt");
      Path key = PG_TLS_DIR.resolve("server.key");
      Files.copy(serverCert, crt, StandardCopyOption.REPLACE_EXISTING);
      Files.copy(serverKey, key, StandardCopyOption.REPLACE_EXISTING);
      UserPrincipal postgres = PG_TLS_DIR.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres");
      for (Path p : List.of(PG_TLS_DIR, crt, key)) Files.setOwner(p, postgres);
      Files.setPosixFilePermissions(PG_TLS_DIR, PosixFilePermissions.fromString("rwxr-xr-x"));
      Files.setPosixFilePermissions(crt, PosixFilePermissions.fromString("rw-r--r--"));
      Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
    } catch (IOException | UnsupportedOperationException e) {
      throw new IllegalStateException("cannot give the local PostgreSQL a test certificate in " + PG_TLS_DIR + " (" + e
          + "): run the integration tests as root or as the postgres user", e);
    }
    try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/test?sslmode=disable", "postgres", "");
         Statement st = c.createStatement()) {
      st.execute("ALTER SYSTEM SET ssl_cert_file = '" + PG_TLS_DIR.resolve("server.crt") + "'");
      st.execute("ALTER SYSTEM SET ssl_key_file = '" + PG_TLS_DIR.resolve("server.key") + "'");
      st.execute("ALTER SYSTEM SET ssl = on");
      st.execute("SELECT pg_reload_conf()");
    }
    // the reload is asynchronous (and TLS may still be on with an earlier run's certificate): wait until this run's CA verifies it
    awaitTrue(Duration.ofSeconds(20), "PostgreSQL serves TLS with this run's certificate", () -> {
      try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/test?sslmode=verify-ca&sslrootcert=" + caCert, "postgres", "");
           Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")) {
        return rs.next() && rs.getBoolean(1);
      }
    });
  }
}
