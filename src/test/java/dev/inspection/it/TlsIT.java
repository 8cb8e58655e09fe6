package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import dev.inspection.common.Pem;
import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.messaging.RabbitConnector;
import dev.inspection.messaging.RabbitOptions;
import dev.inspection.node.Node;
import dev.inspection.store.Db;
import dev.inspection.store.PgOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.pgclient.PgConnection;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Transport security with certificates this test makes (openssl, into target/): HTTPS for the API and
 * console (Secure cookie, plain HTTP refused), RabbitMQ over TLS through a TLS-terminating proxy in front
 * of the local broker (right CA and host name connect; a wrong CA or a certificate for another name are
 * refused), and PostgreSQL verify-full against the local server with TLS turned on (see {@link TestPki}).
 * Every certificate names "localhost" only, so connecting by 127.0.0.1 is a host-name mismatch.
 */
class TlsIT {
  private static TestPki pki;
  private static Vertx vertx;
  private static NetServer rabbitProxy;

  @BeforeAll
  static void setUp() throws Exception {
    pki = TestPki.create(Path.of("target", "tls-it").toAbsolutePath());
    pki.enablePostgresTls();
    vertx = Vertx.vertx();
    rabbitProxy = tlsProxy(vertx, pki, 5672);
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (vertx != null) vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** A TLS server (the test's "localhost" certificate) that forwards the bytes to 127.0.0.1:{@code upstream}: the broker's TLS listener. */
  static NetServer tlsProxy(Vertx vertx, TestPki pki, int upstream) throws Exception {
    NetClient client = vertx.createNetClient();
    NetServer server = vertx.createNetServer(new NetServerOptions().setSsl(true)
        .setKeyCertOptions(new PemKeyCertOptions().setCertPath(pki.serverCert.toString()).setKeyPath(pki.serverKey.toString())));
    server.connectHandler(in -> {
      in.pause();
      client.connect(upstream, "127.0.0.1").onComplete(ar -> {
        if (ar.failed()) {
          in.close();
          return;
        }
        in.pipeTo(ar.result());
        ar.result().pipeTo(in);
      });
    });
    return server.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static <T> T get(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
  }

  /** The failure was the TLS handshake refusing the peer (not a refused port or a timeout). */
  private static void assertTlsRefusal(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SSLException || t instanceof CertificateException) return;
      // the PostgreSQL client reports a refused handshake as VertxException("SSL handshake failed") without its cause
      if (t instanceof io.vertx.core.VertxException && String.valueOf(t.getMessage()).contains("SSL handshake failed")) return;
    }
    throw new AssertionError("expected a TLS refusal, got " + e, e);
  }

  // ---------------------------------------------------------------- RabbitMQ

  private static RabbitOptions rabbit(String host, Path ca) {
    return new RabbitOptions(host, rabbitProxy.actualPort(), "guest", "guest", "/", true, ca.toString());
  }

  @Test
  void rabbitTlsVerifiesTheBrokersCaAndHostName() throws Exception {
    String queue = "tls_it_" + Long.toHexString(System.nanoTime());
    try (Connection c = RabbitConnector.factory(rabbit("localhost", pki.caCert)).newConnection("tls-it"); Channel ch = c.createChannel()) {
      ch.queueDeclare(queue, false, false, true, null);
      ch.confirmSelect();
      ch.basicPublish("", queue, null, "over tls".getBytes(StandardCharsets.UTF_8));
      ch.waitForConfirmsOrDie(10_000);
      GetResponse got = ch.basicGet(queue, true);
      assertNotNull(got, "the message published over TLS reached the broker");
      assertEquals("over tls", new String(got.getBody(), StandardCharsets.UTF_8));
      ch.queueDelete(queue);
    }
    Exception wrongCa = assertThrows(Exception.class, () -> RabbitConnector.factory(rabbit("localhost", pki.otherCaCert)).newConnection("tls-it-wrong-ca"));
    assertTlsRefusal(wrongCa);
    Exception wrongName = assertThrows(Exception.class, () -> RabbitConnector.factory(rabbit("127.0.0.1", pki.caCert)).newConnection("tls-it-wrong-name"));
    assertTlsRefusal(wrongName);
  }

  // ---------------------------------------------------------------- PostgreSQL

  private static PgOptions pg(String host, String mode, Path ca) {
    return new PgOptions(host, 5432, "test", "postgres", "", "public", mode, ca == null ? "" : ca.toString(), 10_000, "inspection-tls-it");
  }

  /** Connects with {@link Db#connectOptions} (as the node does) and answers whether the session is encrypted. */
  private static boolean connectAndCheckSsl(PgOptions o) throws Exception {
    PgConnection c = get(PgConnection.connect(vertx, Db.connectOptions(o)));
    try {
      return get(c.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").execute()).iterator().next().getBoolean(0);
    } finally {
      c.close();
    }
  }

  @Test
  void postgresVerifyFullChecksTheCaAndTheHostName() throws Exception {
    assertTrue(connectAndCheckSsl(pg("localhost", "verify-full", pki.caCert)), "verify-full with the right CA and name: an encrypted session");
    ExecutionException wrongCa = assertThrows(ExecutionException.class, () -> connectAndCheckSsl(pg("localhost", "verify-full", pki.otherCaCert)));
    assertTlsRefusal(wrongCa);
    ExecutionException wrongName = assertThrows(ExecutionException.class, () -> connectAndCheckSsl(pg("127.0.0.1", "verify-full", pki.caCert)));
    assertTlsRefusal(wrongName);
    // the same name mismatch is accepted by verify-ca (chain only): the refusal above was the host-name check
    assertTrue(connectAndCheckSsl(pg("127.0.0.1", "verify-ca", pki.caCert)));
    assertFalse(connectAndCheckSsl(pg("127.0.0.1", "disable", null)), "disable stays plain");
  }

  // ---------------------------------------------------------------- a node with all three

  @Test
  void aNodeServesHttpsAndReachesPostgresAndRabbitOverVerifiedTls() throws Exception {
    try (TestEnv env = new TestEnv(4)) {
      Map<String, String> o = new HashMap<>();
      o.put("role", "all");
      o.put("node.id", env.name + "-tls");
      o.put("http.tls.cert", pki.serverCert.toString());
      o.put("http.tls.key", pki.serverKey.toString());
      o.put("pg.host", "localhost");
      o.put("pg.ssl.mode", "verify-full");
      o.put("pg.tls.ca", pki.caCert.toString());
      o.put("rabbit.host", "localhost");
      o.put("rabbit.port", Integer.toString(rabbitProxy.actualPort()));
      o.put("rabbit.ssl", "true");
      o.put("rabbit.tls.ca", pki.caCert.toString());
      Node node = env.start(o);
      int port = node.httpPort();
      HttpClient trusting = HttpClient.newBuilder().sslContext(Pem.trusting("test", pki.caCert.toString())).connectTimeout(Duration.ofSeconds(5)).build();
      URI base = URI.create("https://localhost:" + port);

      HttpResponse<String> live = trusting.send(HttpRequest.newBuilder(base.resolve("/health/live")).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, live.statusCode());
      // ready = the worker's broker connection (through the TLS proxy) and PostgreSQL (verify-full) both work
      awaitTrue(Duration.ofSeconds(30), "ready over TLS", () -> trusting.send(HttpRequest.newBuilder(base.resolve("/health/ready")).build(),
          HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
      long encrypted = env.queryLong("SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE s.ssl"
          + " AND a.application_name LIKE 'inspection-%' AND a.query NOT LIKE '%pg_stat_ssl%'");
      assertTrue(encrypted > 0, "the node's PostgreSQL sessions are encrypted");

      HttpResponse<String> login = trusting.send(HttpRequest.newBuilder(base.resolve("/login"))
          .header("Content-Type", "application/x-www-form-urlencoded")
          .POST(HttpRequest.BodyPublishers.ofString("username=" + TestEnv.CONSOLE_USER + "&password=" + TestEnv.CONSOLE_PASSWORD)).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(303, login.statusCode());
      String cookie = login.headers().allValues("Set-Cookie").stream().filter(c -> c.startsWith("inspection_session=")).findFirst().orElseThrow();
      assertTrue(List.of(cookie.split(";\\s*")).contains("Secure"), "the session cookie is Secure on HTTPS: " + cookie);

      HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      assertThrows(IOException.class, () -> plain.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/health/live"))
          .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()), "plain HTTP to the TLS port gets no answer");
      HttpClient otherCa = HttpClient.newBuilder().sslContext(Pem.trusting("test", pki.otherCaCert.toString())).build();
      IOException refused = assertThrows(IOException.class, () -> otherCa.send(HttpRequest.newBuilder(base.resolve("/health/live")).build(),
          HttpResponse.BodyHandlers.ofString()));
      assertTlsRefusal(refused);
    }
  }

  // ---------------------------------------------------------------- bad configuration

  private static void assertRefused(String key, Map<String, String> settings) {
    ConfigException e = assertThrows(ConfigException.class, () -> Node.validate(Config.of(settings)), key);
    assertTrue(e.getMessage().startsWith(key), "the message names " + key + ": " + e.getMessage());
  }

  @Test
  void missingOrUnreadableTlsFilesStopStartUpNamingTheKey() throws Exception {
    String missing = pki.dir.resolve("no-such.pem").toString();
    assertRefused("http.tls.key", Map.of("http.tls.cert", pki.serverCert.toString()));
    assertRefused("http.tls.key", Map.of("http.tls.cert", pki.serverCert.toString(), "http.tls.key", missing));
    assertRefused("http.tls.cert", Map.of("http.tls.cert", pki.serverKey.toString(), "http.tls.key", pki.serverKey.toString()));
    assertRefused("pg.tls.ca", Map.of("pg.ssl.mode", "verify-full", "pg.tls.ca", missing));
    assertRefused("pg.ssl.mode", Map.of("pg.ssl.mode", "on"));
    assertRefused("rabbit.tls.ca", Map.of("rabbit.ssl", "true", "rabbit.tls.ca", missing));
    assertRefused("pg.ssl", Map.of("pg.ssl", "true"));
    // a certificate with a key that is not its own: refused when the server builds its options, naming the keys
    Map<String, String> mismatched = Map.of("role", "probe", "http.port", "0", "http.tls.cert", pki.serverCert.toString(),
        "http.tls.key", pki.caKey.toString(), "data.dir", pki.dir.resolve("data").toString(), "probe.sim.devices", "0",
        "security.allow.insecure.credentials", "true", // the local test services' accounts
        "rabbit.port", "9"); // nothing listens there: the probe keeps retrying in the background and touches no broker
    Node.validate(Config.of(mismatched));
    Node n = new Node(Config.of(mismatched), java.time.Clock.systemUTC());
    try {
      n.start().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      fail("a node with a key that does not match its certificate started");
    } catch (ExecutionException e) {
      assertTrue(e.getCause() instanceof ConfigException && e.getCause().getMessage().startsWith("http.tls.key"), e.getCause().toString());
    } finally {
      n.stop().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
