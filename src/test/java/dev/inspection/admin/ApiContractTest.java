package dev.inspection.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.config.Config;
import dev.inspection.metrics.Metrics;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The API contract (issue 15 item 6) without a cluster: the jar's openapi.yaml loads and refuses bad
 * parameters and bodies before any route runs, naming them in the API's error shape; a valid request
 * reaches its route with the contract's defaults; a broken contract stops the start with a message.
 */
class ApiContractTest {
  private static final String TOKEN = "0123456789abcdef0123";
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  /** Routes of the test's contract (contract/things.yaml) that echo what they were given. */
  private static final Routes ECHO = r -> {
    r.get("/api/v1/things").handler(ctx -> Http.json(ctx, 200, new JsonObject().put("n", Http.intParam(ctx, "n")).put("group", Http.param(ctx, "group"))));
    r.post("/api/v1/things").handler(ctx -> Http.json(ctx, 200, Http.bodyObject(ctx)));
    r.get("/api/v1/things/:id/refused").handler(ctx -> Http.json(ctx, 200, new JsonObject().put("id", ctx.pathParam("id"))));
  };

  private final Vertx vertx = Vertx.vertx();

  private record Res(int status, JsonObject json) {
    String error() {
      return json.getString("error");
    }
  }

  @AfterEach
  void closeVertx() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static Config config() {
    return Config.of(Map.of("http.port", "0", "http.host", "127.0.0.1", "api.token", TOKEN, "console.password", "a-long-password-42"));
  }

  private HttpApi api(List<Routes> routes) {
    return new HttpApi(config(), Metrics.prometheus(), Map.of(), Credentials.resolve(config(), System.out), routes);
  }

  private int deploy(HttpApi api) throws Exception {
    vertx.deployVerticle(api).toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    return api.port();
  }

  private static Res call(int port, String method, String path, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(10))
        .header("Authorization", "Bearer " + TOKEN)
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    return new Res(r.statusCode(), new JsonObject(r.body()));
  }

  /** The answer to one request line written as it is, with the token; the connection closed after it. */
  private static String raw(int port, String requestLine) throws Exception {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write((requestLine + "\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN + "\r\nConnection: close\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void theJarsContractRefusesABadQueryParameterBeforeAnyRouteNamingIt() throws Exception {
    int port = deploy(api(List.of())); // no resources: what answers 400 is the contract alone
    Res limit = call(port, "GET", "/api/v1/devices?limit=0", null);
    assertEquals(400, limit.status());
    assertTrue(limit.error().startsWith("query parameter 'limit' is invalid: "), limit.error());
    assertEquals(400, limit.json().getInteger("status"));
    Res notANumber = call(port, "GET", "/api/v1/alerts?min_severity=high", null);
    assertEquals(400, notANumber.status());
    assertTrue(notANumber.error().startsWith("query parameter 'min_severity' is invalid: "), notANumber.error());
    Res state = call(port, "GET", "/api/v1/dead-letters?state=maybe", null);
    assertTrue(state.error().startsWith("query parameter 'state' is invalid: "), state.error());
    Res slot = call(port, "GET", "/api/v1/slots/x/history", null);
    assertEquals(400, slot.status());
    assertTrue(slot.error().startsWith("path parameter 'id' is invalid: "), slot.error());
    Res missing = call(port, "GET", "/api/v1/probe/inventory", null);
    assertEquals(new JsonObject().put("error", "query parameter 'group' is required" + ContractErrors.SEE).put("status", 400), missing.json());
    assertEquals(404, call(port, "GET", "/api/v1/devices?limit=10", null).status(), "valid: on to the router (no route here)");
    assertEquals(400, call(port, "GET", "/api/v1/probe/inventory?group=%20", null).status(), "a blank group");
    String undecodable = raw(port, "GET /api/v1/devices?q=%zz HTTP/1.1"); // no Java client sends that
    assertTrue(undecodable.startsWith("HTTP/1.1 400"), undecodable);
    assertTrue(undecodable.contains("not valid URL encoding"), undecodable);
    assertEquals(404, call(port, "GET", "/api/v1/probe/inventory?group=east&limit=10", null).status());
    assertEquals(404, call(port, "GET", "/api/v1/devices/d-1/rollups?from=" + Instant.now().minusSeconds(60) + "&to=" + Instant.now(), null).status(),
        "an instant as Java writes it is a date-time");
    Res from = call(port, "GET", "/api/v1/devices/d-1/rollups?from=yesterday", null);
    assertTrue(from.error().startsWith("query parameter 'from' is invalid: "), from.error());
  }

  @Test
  void theJarsContractRefusesABadBodyFieldNamingIt() throws Exception {
    int port = deploy(api(List.of()));
    Res slots = call(port, "POST", "/api/v1/slot-map", "{\"slots\": \"many\"}");
    assertEquals(400, slots.status());
    assertTrue(slots.error().startsWith("body field 'slots' is invalid: "), slots.error());
    Res range = call(port, "POST", "/api/v1/slot-map", "{\"slots\": 5000}");
    assertTrue(range.error().startsWith("body field 'slots' is invalid: "), range.error());
    Res none = call(port, "POST", "/api/v1/slot-map", "{}");
    assertEquals("body field 'slots' is required" + ContractErrors.SEE, none.error());
    Res id = call(port, "POST", "/api/v1/dead-letters/replay", "{\"ids\": [1, \"x\"]}");
    assertTrue(id.error().startsWith("body field 'ids.1' is invalid: "), id.error());
    Res unknown = call(port, "PATCH", "/api/v1/devices/d-1", "{\"device_id\": \"x\"}");
    assertEquals(400, unknown.status());
    assertEquals("body field 'device_id' is not accepted here: send only the fields the contract lists" + ContractErrors.SEE, unknown.error());
    Res priority = call(port, "PATCH", "/api/v1/devices/d-1", "{\"priority\": 7}");
    assertEquals("body field 'priority' is invalid: 7 is greater than 3" + ContractErrors.SEE, priority.error());
    Res notJson = call(port, "POST", "/api/v1/dead-letters/discard", "{ids: nope");
    assertEquals("the body is not valid JSON: send a JSON object (application/json)", notJson.error());
    Res empty = call(port, "POST", "/api/v1/dead-letters/discard", null);
    assertEquals(400, empty.status());
    assertEquals(404, call(port, "POST", "/api/v1/dead-letters/discard", "{\"ids\": [3]}").status(), "valid: on to the router");
    assertEquals(404, call(port, "POST", "/api/v1/devices/import", "{\"device_id\":\"a\"}\n{\"device_id\":\"b\"}").status(),
        "the import's body (JSON lines here) is the route's to check");
  }

  @Test
  void aValidRequestReachesItsRouteWithTheContractsDefaults() throws Exception {
    int port = deploy(api(List.of(ECHO)).withContract(HttpApiTest.THINGS));
    assertEquals(new JsonObject().put("n", 1).put("group", null), call(port, "GET", "/api/v1/things", null).json(), "the contract's default");
    assertEquals(new JsonObject().put("n", 7).put("group", "g 1"), call(port, "GET", "/api/v1/things?n=7&group=g%201", null).json());
    assertEquals(new JsonObject().put("a", "b").put("ids", List.of(1, 2)), call(port, "POST", "/api/v1/things", "{\"a\":\"b\",\"ids\":[1,2]}").json());
    assertEquals("7", call(port, "GET", "/api/v1/things/7/refused", null).json().getString("id"));
  }

  @Test
  void aBodyIsReadAsJsonWhateverItsContentTypeSays() throws Exception {
    int port = deploy(api(List.of(ECHO)).withContract(HttpApiTest.THINGS));
    HttpResponse<String> form = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/things"))
        .header("Authorization", "Bearer " + TOKEN).header("Content-Type", "application/x-www-form-urlencoded") // what curl -d sends
        .POST(HttpRequest.BodyPublishers.ofString("{\"a\":\"c\"}")).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, form.statusCode(), form.body());
    assertEquals(new JsonObject().put("a", "c"), new JsonObject(form.body()));
  }

  @Test
  void aBrokenContractStopsTheStartWithAMessageNamingTheFile(@TempDir Path dir) throws Exception {
    Path broken = dir.resolve("openapi.yaml");
    try (var in = ApiContractTest.class.getClassLoader().getResourceAsStream("contract/broken.yaml")) {
      Files.write(broken, in.readAllBytes());
    }
    HttpApi api = api(List.of()).withContract(broken.toString());
    ExecutionException e = assertThrows(ExecutionException.class, () -> deploy(api));
    String message = e.getCause().getMessage();
    assertTrue(message.startsWith("the API contract " + broken + " cannot be loaded: "), message);
    assertTrue(message.contains("\"/api/v1/things\"") && message.contains("fix the file"), "names where the fault is and what to do: " + message);
    assertEquals(-1, api.port(), "no server listens");
    Files.writeString(broken, "openapi: 3.0.3\npaths: [\n");
    String notYaml = assertThrows(ExecutionException.class, () -> deploy(api(List.of()).withContract(broken.toString()))).getCause().getMessage();
    assertTrue(notYaml.startsWith("the API contract " + broken + " cannot be loaded: "), notYaml);
  }

  @Test
  void aRoleWithoutTheApiLoadsNoContract() throws Exception {
    HttpApi health = new HttpApi(config(), Metrics.prometheus(), Map.of()).withContract("no/such/contract.yaml");
    assertTrue(deploy(health) > 0);
  }

  @Test
  void aJsonPointerIntoTheBodyIsNamedAsAField() {
    assertEquals("slots", ContractErrors.field("/slots"));
    assertEquals("ids.0", ContractErrors.field("#/ids/0"));
    assertEquals("a/b", ContractErrors.field("/a~1b"));
    assertNull(ContractErrors.field("#"));
    assertNull(ContractErrors.field(""));
  }
}
