package dev.inspection.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ReadyCheckTest {
  @Test
  void readyOnlyWhenTheNodeAnswers200() throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/health/ready", x -> answer(x, 200));
    server.createContext("/down", x -> answer(x, 503));
    server.start();
    try {
      String base = "http://127.0.0.1:" + server.getAddress().getPort();
      assertEquals(0, ReadyCheck.check(URI.create(base + "/health/ready"), Duration.ofSeconds(5)));
      assertEquals(1, ReadyCheck.check(URI.create(base + "/down"), Duration.ofSeconds(5)));
    } finally {
      server.stop(0);
    }
    // nothing listens there any more
    assertEquals(1, ReadyCheck.check(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/health/ready"), Duration.ofSeconds(2)));
  }

  @Test
  void theDefaultUrlUsesThePortFromTheContainersEnvironment() {
    assertEquals("http://127.0.0.1:8080/health/ready", ReadyCheck.defaultUrl(null));
    assertEquals("http://127.0.0.1:9090/health/ready", ReadyCheck.defaultUrl(" 9090"));
  }

  private static void answer(com.sun.net.httpserver.HttpExchange x, int status) throws java.io.IOException {
    byte[] body = ("{\"status\":" + status + "}").getBytes(StandardCharsets.UTF_8);
    x.sendResponseHeaders(status, body.length);
    x.getResponseBody().write(body);
    x.close();
  }
}
