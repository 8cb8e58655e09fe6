package dev.inspection.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigTest {

  @Test
  void aNodeStartedWithoutFlagsAddsNoSimulatedDevices() {
    Config c = Config.load(new String[0], Map.of());
    assertEquals(Role.ALL, c.role());
    assertEquals(256, c.getInt(Keys.SLOTS_TOTAL));
    assertEquals(0, c.getInt(Keys.PROBE_SIM_DEVICES));
    assertEquals(8080, c.getInt(Keys.HTTP_PORT));
    assertEquals(0, Config.of(Map.of()).getInt(Keys.PROBE_SIM_DEVICES));
  }

  @Test
  void demoModeAddsTheDemoFleetUnlessProbeSimDevicesIsGiven(@TempDir Path dir) throws Exception {
    assertEquals(10000, Config.load(new String[] {"--demo.mode=true"}, Map.of()).getInt(Keys.PROBE_SIM_DEVICES));
    assertEquals(10000, Config.load(new String[0], Map.of("INSPECT_DEMO_MODE", "true")).getInt(Keys.PROBE_SIM_DEVICES));
    assertEquals(10000, Config.of(Map.of("demo.mode", "true")).getInt(Keys.PROBE_SIM_DEVICES));
    // given anywhere, even as 0 or as the documented default in a config file, it wins
    assertEquals(0, Config.load(new String[] {"--demo.mode=true", "--probe.sim.devices=0"}, Map.of()).getInt(Keys.PROBE_SIM_DEVICES));
    assertEquals(25, Config.load(new String[] {"--demo.mode=true"}, Map.of("INSPECT_PROBE_SIM_DEVICES", "25")).getInt(Keys.PROBE_SIM_DEVICES));
    Path f = dir.resolve("node.properties");
    Files.writeString(f, "demo.mode=true\nprobe.sim.devices=7\n");
    assertEquals(7, Config.load(new String[] {"--config", f.toString()}, Map.of()).getInt(Keys.PROBE_SIM_DEVICES));
    assertEquals(5, Config.of(Map.of("demo.mode", "true", "probe.sim.devices", "5")).getInt(Keys.PROBE_SIM_DEVICES));
  }

  @Test
  void demoModePushesSimulatedHotelRoomsWithAGeneratedTokenAndFlapsOnePercent() {
    Config demo = Config.load(new String[] {"--demo.mode=true"}, Map.of());
    assertEquals(40, demo.getInt(Keys.PROBE_SIM_PUSH_ROOMS));
    assertEquals(1, demo.getInt(Keys.PROBE_SIM_FLAP_PCT));
    assertEquals(32, demo.get(Keys.PROBE_INGEST_TOKENS).length(), "a generated push token for the simulated rooms");
    Config.validateAll(demo);
    Config own = Config.load(new String[] {"--demo.mode=true", "--probe.ingest.tokens=gateway-token-0123456789"}, Map.of());
    assertEquals("gateway-token-0123456789", own.get(Keys.PROBE_INGEST_TOKENS), "a configured token is kept");
    Config none = Config.load(new String[] {"--demo.mode=true", "--probe.sim.push.rooms=0"}, Map.of());
    assertEquals("", none.get(Keys.PROBE_INGEST_TOKENS), "no rooms, no generated token");
    Config plain = Config.load(new String[0], Map.of());
    assertEquals(0, plain.getInt(Keys.PROBE_SIM_PUSH_ROOMS));
    assertEquals(0, plain.getInt(Keys.PROBE_SIM_FLAP_PCT));
  }

  @Test
  void pushedSimulatedRoomsOutsideDemoModeNeedAPushToken() {
    ConfigException e = assertThrows(ConfigException.class,
        () -> Config.validateAll(Config.load(new String[] {"--probe.sim.push.rooms=5"}, Map.of())));
    assertTrue(e.getMessage().contains("probe.ingest.tokens"), e.getMessage());
    e = assertThrows(ConfigException.class, () -> Config.validateAll(Config.load(new String[] {"--probe.sim.flap.pct=101"}, Map.of())));
    assertTrue(e.getMessage().startsWith("probe.sim.flap.pct"), e.getMessage());
    e = assertThrows(ConfigException.class, () -> Config.validateAll(Config.load(
        new String[] {"--probe.sim.push.rooms=5", "--probe.ingest.tokens=gateway-token-0123456789", "--probe.sim.push.interval.ms=10"}, Map.of())));
    assertTrue(e.getMessage().startsWith("probe.sim.push.interval.ms"), e.getMessage());
  }

  @Test
  void aNegativeLookGatherStopsStartUpNamingTheKey() {
    ConfigException e = assertThrows(ConfigException.class, () -> Config.validateAll(Config.load(new String[] {"--probe.look.gather.ms=-1"}, Map.of())));
    assertTrue(e.getMessage().startsWith("probe.look.gather.ms must not be negative"), e.getMessage());
    Config.validateAll(Config.load(new String[] {"--probe.look.gather.ms=0"}, Map.of())); // 0: each device at its due time
  }

  @Test
  void aNegativeLockTimeoutStopsStartUpNamingTheKey() {
    for (String key : List.of("worker.degraded.history.lock.timeout.ms", "api.lock.timeout.ms")) {
      ConfigException e = assertThrows(ConfigException.class, () -> Config.validateAll(Config.load(new String[] {"--" + key + "=-1"}, Map.of())));
      assertTrue(e.getMessage().startsWith(key + " must not be negative (got -1)"), e.getMessage());
      Config.validateAll(Config.load(new String[] {"--" + key + "=0"}, Map.of())); // 0: wait as long as the lock lasts
    }
  }

  @Test
  void aCommitP99WindowShorterThanTheHeartbeatStopsStartUpNamingBothKeys() {
    ConfigException e = assertThrows(ConfigException.class, () -> Config.validateAll(Config.load(new String[] {"--worker.commit.p99.window.ms=2000"}, Map.of())));
    assertTrue(e.getMessage().startsWith("worker.commit.p99.window.ms (2000) must be at least worker.heartbeat.ms (3000)"), e.getMessage());
    Config.validateAll(Config.load(new String[] {"--worker.commit.p99.window.ms=2000", "--worker.heartbeat.ms=2000", "--worker.lease.ttl.ms=6000"}, Map.of()));
  }

  @Test
  void flagsWinOverEnvironmentWhichWinsOverTheFile(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("node.properties");
    Files.writeString(f, "pg.host=file-host\nhttp.port=1111\nslots.total=16\n");
    Config c = Config.load(new String[] {"--config", f.toString(), "--http.port=3333"}, Map.of("INSPECT_HTTP_PORT", "2222", "INSPECT_PG_HOST", "env-host"));
    assertEquals("env-host", c.get(Keys.PG_HOST));
    assertEquals(3333, c.getInt(Keys.HTTP_PORT));
    assertEquals(16, c.getInt(Keys.SLOTS_TOTAL));
  }

  @Test
  void unknownFlagStopsStartUpNamingItAndSuggestingTheKey() {
    ConfigException e = assertThrows(ConfigException.class, () -> Config.load(new String[] {"--pg.hots=x"}, Map.of()));
    assertTrue(e.getMessage().contains("'pg.hots'"), e.getMessage());
    assertTrue(e.getMessage().contains("did you mean 'pg.host'"), e.getMessage());
  }

  @Test
  void unknownEnvironmentVariableAndFileKeyAreRefused(@TempDir Path dir) throws Exception {
    ConfigException env = assertThrows(ConfigException.class, () -> Config.load(new String[0], Map.of("INSPECT_NOPE", "1")));
    assertTrue(env.getMessage().contains("INSPECT_NOPE"), env.getMessage());
    Path f = dir.resolve("bad.properties");
    Files.writeString(f, "worker.prefetch=5\n");
    ConfigException file = assertThrows(ConfigException.class, () -> Config.load(new String[] {"--config=" + f}, Map.of()));
    assertTrue(file.getMessage().contains("'worker.prefetch'") && file.getMessage().contains("config file"), file.getMessage());
  }

  @Test
  void badValuesAndRolesAreRefusedWithTheKeyNamed() {
    ConfigException n = assertThrows(ConfigException.class, () -> Config.load(new String[] {"--http.port=eighty"}, Map.of()));
    assertTrue(n.getMessage().contains("http.port") && n.getMessage().contains("eighty"), n.getMessage());
    ConfigException r = assertThrows(ConfigException.class, () -> Config.load(new String[] {"--role=prober"}, Map.of()));
    assertTrue(r.getMessage().contains("unknown role 'prober'"), r.getMessage());
    ConfigException v = assertThrows(ConfigException.class, () -> Config.validateAll(Config.of(Map.of("worker.lease.ttl.ms", "4000"))));
    assertTrue(v.getMessage().contains("worker.lease.ttl.ms"), v.getMessage());
    assertThrows(ConfigException.class, () -> Config.load(new String[] {"--pg.host"}, Map.of()));
  }

  @Test
  void badFleetModeThresholdsAreRefusedWithTheKeyNamed() {
    ConfigException ratio = assertThrows(ConfigException.class, () -> Config.validateAll(Config.of(Map.of("scheduler.fleet.leave.ratio", "1"))));
    assertTrue(ratio.getMessage().contains("scheduler.fleet.leave.ratio"), ratio.getMessage());
    ConfigException order = assertThrows(ConfigException.class,
        () -> Config.validateAll(Config.of(Map.of("scheduler.fleet.backlog.high", "5000", "scheduler.fleet.backlog.critical", "5000"))));
    assertTrue(order.getMessage().contains("scheduler.fleet.backlog.critical") && order.getMessage().contains("scheduler.fleet.backlog.high"), order.getMessage());
    ConfigException zero = assertThrows(ConfigException.class, () -> Config.validateAll(Config.of(Map.of("probe.mode.unreachable.ms", "0"))));
    assertTrue(zero.getMessage().contains("probe.mode.unreachable.ms"), zero.getMessage());
    ConfigException pct = assertThrows(ConfigException.class, () -> Config.validateAll(Config.of(Map.of("scheduler.fleet.failing.workers.pct", "150"))));
    assertTrue(pct.getMessage().contains("scheduler.fleet.failing.workers.pct"), pct.getMessage());
    Config.validateAll(Config.of(Map.of())); // the defaults pass
  }

  @Test
  void badLaneSettingsStopStartUpNamingTheKey() {
    for (Map.Entry<String, String> bad : Map.of("worker.lane.weight.high", "0", "worker.lane.weight.normal", "-1", "worker.lane.weight.low", "-2",
        "worker.lane.starvation.ms", "0", "worker.prefetch.low", "0", "queue.low.max.bytes", "0", "queue.low.max.length", "0").entrySet()) {
      ConfigException e = assertThrows(ConfigException.class, () -> Config.validateAll(Config.of(Map.of(bad.getKey(), bad.getValue()))));
      assertTrue(e.getMessage().contains(bad.getKey()), e.getMessage());
    }
    Config.validateAll(Config.of(Map.of("worker.lane.weight.normal", "0", "worker.lane.weight.low", "0")));
  }

  @Test
  void badDirectorySettingsStopStartUpNamingTheKey() {
    for (Map.Entry<String, String> bad : Map.of("worker.directory.ttl.ms", "999", "worker.directory.max.devices", "0").entrySet()) {
      ConfigException e = assertThrows(ConfigException.class, () -> Config.validateAll(Config.of(Map.of(bad.getKey(), bad.getValue()))));
      assertTrue(e.getMessage().contains(bad.getKey()) && e.getMessage().contains(bad.getValue()), e.getMessage());
    }
    Config.validateAll(Config.of(Map.of("worker.directory.ttl.ms", "1000", "worker.directory.max.devices", "1")));
  }

  @Test
  void shippedConfFileDocumentsExactlyTheBuiltInDefaults() throws Exception {
    assertEquals(Config.propertiesTemplate(), Files.readString(Path.of("conf/node.properties")),
        "conf/node.properties is stale: regenerate it with java -jar target/node.jar --print-config > conf/node.properties");
  }
}
