package dev.inspection.node;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The container image's HEALTHCHECK, which has no curl to rely on:
 * {@code java -cp node.jar dev.inspection.node.ReadyCheck [URL]} exits 0 when URL answers 200 within 5 s,
 * else 1 and says why on stderr. The default URL is {@code http://127.0.0.1:PORT/health/ready} with the
 * port the node was given in the container's environment (INSPECT_HTTP_PORT), else 8080.
 */
public final class ReadyCheck {
  private ReadyCheck() {}

  public static void main(String[] args) {
    System.exit(check(URI.create(args.length > 0 ? args[0] : defaultUrl(System.getenv("INSPECT_HTTP_PORT"))), Duration.ofSeconds(5)));
  }

  static String defaultUrl(String port) {
    return "http://127.0.0.1:" + (port == null || port.isBlank() ? "8080" : port.trim()) + "/health/ready";
  }

  /** 0 when the URL answers 200 within the timeout, else 1 (the reason on stderr). */
  static int check(URI url, Duration timeout) {
    HttpClient client = HttpClient.newBuilder().connectTimeout(timeout).build();
    try {
      HttpResponse<String> r = client.send(HttpRequest.newBuilder(url).timeout(timeout).GET().build(), HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() == 200) return 0;
      System.err.println("not ready: " + url + " answered " + r.statusCode() + " " + r.body());
    } catch (Exception e) {
      if (e instanceof InterruptedException) Thread.currentThread().interrupt();
      System.err.println("not ready: " + url + ": " + e);
    }
    return 1;
  }
}
