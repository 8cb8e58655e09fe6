package dev.inspection.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.common.ApiError;
import dev.inspection.config.Config;
import dev.inspection.metrics.Metrics;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The server's frame without a cluster: health, the 404 fallback, the API's auth and the one failure handler. */
class HttpApiTest {
  private static final String TOKEN = "0123456789abcdef0123";
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  /** A resource that fails in each way the failure handler knows. */
  private static final Routes PROBLEMS = r -> {
    r.get("/api/v1/things").handler(ctx -> Http.json(ctx, 200, new JsonObject().put("n", Http.intParam(ctx, "n"))));
    r.post("/api/v1/things").handler(ctx -> Http.json(ctx, 200, Http.bodyObject(ctx)));
    r.get("/api/v1/things/:id/refused").handler(ctx -> ctx.fail(new ApiError(409, "send it to the leader", new JsonObject().put("leader_url", "http://l"))));
    r.get("/api/v1/broken").handler(ctx -> ctx.fail(new IllegalStateException("boom")));
    r.get("/api/v1/probe/open").handler(ctx -> Http.json(ctx, 200, new JsonObject().put("open", true)));
  };

  /** The contract of {@link #PROBLEMS}' routes (src/test/resources). */
  static final String THINGS = "contract/things.yaml";

  private final Vertx vertx = Vertx.vertx();

  private record Res(int status, String body) {
    JsonObject json() {
      return new JsonObject(body);
    }
  }

  @AfterEach
  void closeVertx() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private int deploy(HttpApi api) throws Exception {
    vertx.deployVerticle(api).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    return api.port();
  }

  private static Config config() {
    return Config.of(Map.of("http.port", "0", "http.host", "127.0.0.1", "api.token", TOKEN, "console.password", "a-long-password-42"));
  }

  /** The server with the API, its routes described by the test's contract. */
  private int withApi() throws Exception {
    return deploy(new HttpApi(config(), Metrics.prometheus(), Map.of(), Credentials.resolve(config(), System.out), List.of(PROBLEMS))
        .withContract(THINGS));
  }

  private static Res call(int port, String method, String path, String body, boolean token) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(10))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (token) b.header("Authorization", "Bearer " + TOKEN);
    HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    return new Res(r.statusCode(), r.body());
  }

  @Test
  void everyRoleServesHealthAndAnswersAnUnknownPathWithA404Body() throws Exception {
    Map<String, BooleanSupplier> checks = Map.of("broker", () -> false);
    int port = deploy(new HttpApi(config(), Metrics.prometheus(), checks));
    assertEquals(new JsonObject().put("status", "UP"), call(port, "GET", "/health/live", null, false).json());
    Res ready = call(port, "GET", "/health/ready", null, false);
    assertEquals(503, ready.status());
    assertEquals(new JsonObject().put("status", "DOWN").put("checks", new JsonObject().put("broker", "DOWN")), ready.json());
    assertEquals(200, call(port, "GET", "/metrics", null, false).status());
    Res none = call(port, "GET", "/api/v1/things", null, true);
    assertEquals(404, none.status(), "a role without the scheduler has no API");
    assertEquals(new JsonObject().put("error", "no route GET /api/v1/things: see the README for the API").put("status", 404), none.json());
  }

  @Test
  void theApiNeedsTheTokenEvenOnTheProbesRoutes() throws Exception {
    int port = withApi();
    Res anonymous = call(port, "GET", "/api/v1/things", null, false);
    assertEquals(401, anonymous.status());
    assertTrue(anonymous.json().getString("error").contains("Authorization: Bearer"), anonymous.body());
    assertEquals(200, call(port, "GET", "/api/v1/things", null, true).status());
    assertEquals(401, call(port, "GET", "/api/v1/probe/open", null, false).status(), "no probe token, no inventory");
    assertEquals(200, call(port, "GET", "/api/v1/probe/open?group=g", null, true).status());
    assertEquals(404, call(port, "GET", "/api/v1/nothing", null, true).status());
  }

  @Test
  void typedErrorsBecomeTheJsonErrorBodyWithTheirStatusAndDetails() throws Exception {
    int port = withApi();
    assertEquals(new JsonObject().put("leader_url", "http://l").put("error", "send it to the leader").put("status", 409),
        call(port, "GET", "/api/v1/things/7/refused", null, true).json());
    Res range = call(port, "GET", "/api/v1/things?n=11", null, true);
    assertEquals(400, range.status());
    assertEquals(new JsonObject().put("error", "query parameter 'n' is invalid: 11 is greater than 10" + ContractErrors.SEE).put("status", 400),
        range.json());
    Res notJson = call(port, "POST", "/api/v1/things", "{nope", true);
    assertEquals(400, notJson.status());
    assertTrue(notJson.json().getString("error").startsWith("the body is not valid JSON: "), notJson.body());
    Res notString = call(port, "POST", "/api/v1/things", "{\"a\":1}", true);
    assertEquals(new JsonObject().put("error", "body field 'a' is invalid: Instance type number is invalid. Expected string" + ContractErrors.SEE)
        .put("status", 400), notString.json());
    assertEquals(new JsonObject().put("a", "1"), call(port, "POST", "/api/v1/things", "{\"a\":\"1\"}", true).json());
  }

  @Test
  void anUntypedFailureAnswersAGenericMessageWithTheRequestIdAndNoInternals() throws Exception {
    Res broken = call(withApi(), "GET", "/api/v1/broken", null, true);
    assertEquals(500, broken.status());
    String id = broken.json().getString("request_id");
    assertTrue(id != null && !id.isBlank(), broken.body());
    assertTrue(broken.json().getString("error").contains("request id " + id), broken.body());
    assertTrue(!broken.body().contains("boom") && !broken.body().contains("IllegalState"), "no internals: " + broken.body());
  }

  @Test
  void everyAnswerCarriesTheSecurityHeadersAndAMutationsBodyIsBounded() throws Exception {
    Config small = Config.of(Map.of("http.port", "0", "api.token", TOKEN, "console.password", "a-long-password-42", "http.body.max.bytes", "100"));
    int port = deploy(new HttpApi(small, Metrics.prometheus(), Map.of(), Credentials.resolve(small, System.out), List.of(PROBLEMS)).withContract(THINGS));
    for (String path : List.of("/health/live", "/api/v1/things", "/nowhere", "/login")) {
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals("DENY", r.headers().firstValue("X-Frame-Options").orElse(null), path);
      assertEquals("nosniff", r.headers().firstValue("X-Content-Type-Options").orElse(null), path);
      assertTrue(r.headers().firstValue("Content-Security-Policy").orElse("").contains("frame-ancestors 'none'"), path);
      assertTrue(r.headers().firstValue("X-Request-Id").isPresent(), path);
      assertTrue(r.headers().allValues("Set-Cookie").isEmpty(), path + " sets no cookie");
    }
    assertEquals(200, call(port, "POST", "/api/v1/things", "{\"a\":\"" + "x".repeat(50) + "\"}", true).status(), "within its limit");
    Res big = call(port, "POST", "/api/v1/things", "{\"a\":\"" + "x".repeat(200) + "\"}", true);
    assertEquals(413, big.status(), big.body());
    assertTrue(big.json().getString("error").contains("http.body.max.bytes"), big.body());
  }

  @Test
  void apiRoutesListsEveryResourceRouteWithItsParameters() throws Exception {
    HttpApi api = new HttpApi(config(), Metrics.prometheus(), Map.of(), Credentials.resolve(config(), System.out), List.of(PROBLEMS));
    deploy(api);
    assertEquals(List.of("GET /api/v1/broken", "GET /api/v1/openapi.yaml", "GET /api/v1/probe/open", "GET /api/v1/things",
        "GET /api/v1/things/{id}/refused", "POST /api/v1/things"), List.copyOf(api.apiRoutes()));
  }
}
