package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.common.BuildInfo;
import dev.inspection.node.Node;
import io.vertx.core.json.JsonObject;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 15 item 7: the leader_url a follower points clients at is a URL they can use: the leader's
 * http.advertised.url, or its host name when it binds to every interface (never http://0.0.0.0).
 */
class LeaderUrlIT {
  private static String leaderUrlSeenBy(Node follower) throws Exception {
    Map.Entry<Integer, String> r = TestEnv.http(follower.httpPort(), "GET", "/api/v1/leader");
    assertEquals(200, r.getKey(), r.getValue());
    JsonObject l = new JsonObject(r.getValue());
    assertFalse(l.getBoolean("this_node_leads"), "asked a follower");
    return l.getString("leader_url");
  }

  @Test
  void aLeaderBoundToEveryInterfaceAdvertisesItsHostNameNotTheWildcard() throws Exception {
    try (TestEnv env = new TestEnv(4)) {
      Node leader = env.start(Map.of("role", "scheduler", "node.id", env.name + "-s1", "http.host", "0.0.0.0"));
      Node follower = env.start(Map.of("role", "scheduler", "node.id", env.name + "-s2"));
      String expected = "http://" + InetAddress.getLocalHost().getHostName() + ":" + leader.httpPort();
      awaitTrue(Duration.ofSeconds(60), "the leader published its URL", () -> expected.equals(leaderUrlSeenBy(follower)));
      // a mutation sent to the follower is refused with the same address
      Map.Entry<Integer, String> refused = TestEnv.http(follower.httpPort(), "POST", "/api/v1/workers/nobody/drain");
      assertEquals(409, refused.getKey(), refused.getValue());
      assertEquals(expected, new JsonObject(refused.getValue()).getString("leader_url"));

      // which build each node runs: /metrics build_info and the API's versions, from the jar's build-info.properties
      BuildInfo build = BuildInfo.current();
      Map.Entry<Integer, String> metrics = TestEnv.http(leader.httpPort(), "GET", "/metrics");
      String line = metrics.getValue().lines().filter(l -> l.startsWith("build_info{")).findFirst().orElse("(no build_info line)");
      assertTrue(line.contains("commit=\"" + build.commit() + "\"") && line.contains("version=\"" + build.version() + "\"") && line.endsWith(" 1"), line);
      JsonObject versions = new JsonObject(TestEnv.http(follower.httpPort(), "GET", "/api/v1/versions").getValue());
      assertEquals(build.version(), versions.getString("app_version"));
      assertEquals(build.commit(), versions.getString("app_commit"));
    }
  }

  @Test
  void aLeaderWithAnAdvertisedUrlPublishesThatUrl() throws Exception {
    try (TestEnv env = new TestEnv(4)) {
      String advertised = "https://sched-a.example.net:9443";
      env.start(Map.of("role", "scheduler", "node.id", env.name + "-s1", "http.host", "0.0.0.0", "http.advertised.url", advertised + "/"));
      Node follower = env.start(Map.of("role", "scheduler", "node.id", env.name + "-s2"));
      awaitTrue(Duration.ofSeconds(60), "the leader published its advertised URL", () -> advertised.equals(leaderUrlSeenBy(follower)));
    }
  }
}
