package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.node.Node;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The dashboard and the alert rules in ops/ against a real Prometheus (Debian's package, installed by
 * scripts/ensure-prometheus.sh when missing): a private Prometheus on its own port and data directory under
 * target/ scrapes a running node (every role, simulated devices) and a port where nothing listens. The rules
 * pass {@code promtool check rules}, load and evaluate without error, every metric they name exists, the
 * node-down alert goes pending for the dead target only, and every query of every dashboard panel returns data.
 */
class PrometheusIT {
  private static final Path PROMETHEUS = Path.of("/usr/bin/prometheus");
  private static final Path PROMTOOL = Path.of("/usr/bin/promtool");
  private static final Path RULES = Path.of("ops", "prometheus", "inspection-alerts.yml").toAbsolutePath();
  private static final Path DASHBOARD = Path.of("ops", "grafana", "inspection-dashboard.json").toAbsolutePath();
  /** What Grafana puts for its interval variables; two scrapes a second apart are enough for rate(). */
  private static final String RATE_WINDOW = "30s";
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void dashboardQueriesReturnDataAndAlertRulesUseOnlyExistingMetrics() throws Exception {
    ensurePrometheus();
    Process check = new ProcessBuilder(PROMTOOL.toString(), "check", "rules", RULES.toString()).redirectErrorStream(true).start();
    String checked = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(check.waitFor(60, TimeUnit.SECONDS) && check.exitValue() == 0, "promtool check rules: " + checked);

    try (TestEnv env = new TestEnv(8)) {
      Node node = env.start(Map.of("role", "all", "node.id", env.name + "-all", "probe.sim.devices", "60", "scheduler.queue.sample.ms", "500"));
      Path dir = Path.of("target", "prometheus-it", env.name).toAbsolutePath();
      Files.createDirectories(dir);
      int port = freePort();
      int dead = freePort();
      Files.writeString(dir.resolve("prometheus.yml"), """
          global:
            scrape_interval: 1s
            evaluation_interval: 1s
          rule_files:
            - %s
          scrape_configs:
            - job_name: inspection
              static_configs:
                - targets: ['127.0.0.1:%d', '127.0.0.1:%d']
          """.formatted(RULES, node.httpPort(), dead));
      Process prometheus = new ProcessBuilder(PROMETHEUS.toString(), "--config.file=" + dir.resolve("prometheus.yml"),
          "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + port, "--storage.tsdb.retention.time=1h")
          .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
      try {
        awaitTrue(Duration.ofSeconds(30), "the private Prometheus answers", () -> ready(port));
        awaitTrue(Duration.ofSeconds(60), "the node is scraped", () -> !query(port, "up{job=\"inspection\"} == 1").isEmpty());
        awaitTrue(Duration.ofSeconds(90), "results committed", () -> !query(port, "sum(worker_committed_total) > 0").isEmpty());
        // the simulated devices were never seen by the worker: their listings were read before their first batches planned
        awaitTrue(Duration.ofSeconds(60), "the directory's reads are exposed",
            () -> !query(port, "sum(worker_directory_reads_total{kind=\"first\"}) > 0").isEmpty());
        Files.writeString(dir.resolve("scrape.txt"), TestEnv.http(node.httpPort(), "GET", "/metrics").getValue()); // for a reader of a failure

        JsonObject labels = query(port, "count by (node, role) (jvm_threads_live_threads)").getJsonObject(0).getJsonObject("metric");
        assertEquals(env.name + "-all", labels.getString("node"), "the common tag node");
        assertEquals("all", labels.getString("role"), "the common tag role");

        assertTrue(query(port, "inspection_no_such_metric_total").isEmpty(), "an unknown metric has no data (the checks below can fail)");
        List<String> empty = new ArrayList<>();
        List<String> exprs = dashboardQueries();
        assertTrue(exprs.size() >= 15, "the dashboard has its panels: " + exprs.size());
        awaitTrue(Duration.ofSeconds(60), "every dashboard query returns data", () -> {
          empty.clear();
          for (String e : exprs) if (query(port, e).isEmpty()) empty.add(e);
          return empty.isEmpty();
        });

        Set<String> missing = new TreeSet<>();
        for (String metric : ruleMetrics()) if (query(port, "group({__name__=\"" + metric + "\"})").isEmpty()) missing.add(metric);
        assertTrue(missing.isEmpty(), "metrics the alert rules use but no node exposes: " + missing);
        awaitTrue(Duration.ofSeconds(30), "every rule evaluated without error", () -> {
          for (JsonObject rule : rules(port)) if (!"ok".equals(rule.getString("health"))) return false;
          return true;
        });
        awaitTrue(Duration.ofSeconds(30), "the node-down alert is pending for the dead target only", () -> {
          JsonArray alerts = get(port, "/api/v1/alerts").getJsonObject("data").getJsonArray("alerts");
          List<String> down = new ArrayList<>();
          for (int i = 0; i < alerts.size(); i++) {
            JsonObject a = alerts.getJsonObject(i);
            if ("InspectionNodeDown".equals(a.getJsonObject("labels").getString("alertname"))) down.add(a.getJsonObject("labels").getString("instance"));
          }
          return down.equals(List.of("127.0.0.1:" + dead));
        });
        JsonArray leaders = query(port, "sum(scheduler_is_leader) != 1");
        assertTrue(leaders.isEmpty(), "one leader, so the leader-count rule is quiet: " + leaders);
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        throw new AssertionError(e.getMessage() + "; dashboard queries without data: " + emptyNow(port), e);
      } finally {
        prometheus.destroy();
        if (!prometheus.waitFor(20, TimeUnit.SECONDS)) prometheus.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  private List<String> emptyNow(int port) {
    List<String> out = new ArrayList<>();
    try {
      for (String e : dashboardQueries()) if (query(port, e).isEmpty()) out.add(e);
    } catch (Exception e) {
      out.add("(could not ask: " + e + ")");
    }
    return out;
  }

  private static void ensurePrometheus() throws Exception {
    if (Files.isExecutable(PROMETHEUS) && Files.isExecutable(PROMTOOL)) return;
    Process p = new ProcessBuilder("bash", "scripts/ensure-prometheus.sh").redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(10, TimeUnit.MINUTES);
    Assumptions.assumeTrue(Files.isExecutable(PROMETHEUS) && Files.isExecutable(PROMTOOL),
        "SKIPPED: Debian's prometheus package (prometheus, promtool) could not be installed, so the dashboard and alert rules were not checked: " + out);
  }

  /** Every target expression of every panel (rows included), Grafana's interval variables replaced. */
  static List<String> dashboardQueries() throws IOException {
    List<String> out = new ArrayList<>();
    collect(new JsonObject(Files.readString(DASHBOARD)).getJsonArray("panels"), out);
    return out;
  }

  private static void collect(JsonArray panels, List<String> out) {
    for (int i = 0; i < panels.size(); i++) {
      JsonObject p = panels.getJsonObject(i);
      if (p.containsKey("panels")) collect(p.getJsonArray("panels"), out);
      JsonArray targets = p.getJsonArray("targets", new JsonArray());
      if (!"row".equals(p.getString("type"))) assertFalse(targets.isEmpty(), "panel '" + p.getString("title") + "' has a query");
      for (int t = 0; t < targets.size(); t++) {
        out.add(targets.getJsonObject(t).getString("expr").replace("$__rate_interval", RATE_WINDOW).replace("$__interval", RATE_WINDOW));
      }
    }
  }

  /** The metric names in the rules file's expressions (what is left after labels, strings, windows, functions and keywords). */
  static Set<String> ruleMetrics() throws IOException {
    Set<String> out = new TreeSet<>();
    for (String expr : PromQl.expressions(Files.readString(RULES))) out.addAll(PromQl.metricNames(expr));
    return out;
  }

  private boolean ready(int port) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/-/ready")).build(), HttpResponse.BodyHandlers.discarding())
          .statusCode() == 200;
    } catch (Exception e) {
      return false;
    }
  }

  private JsonObject get(int port, String pathAndQuery) throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery)).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), pathAndQuery + ": " + r.body());
    return new JsonObject(r.body());
  }

  private JsonArray query(int port, String promql) throws Exception {
    return get(port, "/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8)).getJsonObject("data").getJsonArray("result");
  }

  private List<JsonObject> rules(int port) throws Exception {
    List<JsonObject> out = new ArrayList<>();
    JsonArray groups = get(port, "/api/v1/rules").getJsonObject("data").getJsonArray("groups");
    for (int g = 0; g < groups.size(); g++) {
      JsonArray rs = groups.getJsonObject(g).getJsonArray("rules");
      for (int i = 0; i < rs.size(); i++) out.add(rs.getJsonObject(i));
    }
    assertTrue(out.size() >= 10, "the rules are loaded: " + out.size());
    return out;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
