package dev.inspection.it;

import static dev.inspection.it.ConsoleBrowserIT.assertNoErrorBanner;
import static dev.inspection.it.ConsoleBrowserIT.click;
import static dev.inspection.it.ConsoleBrowserIT.logIn;
import static dev.inspection.it.ConsoleBrowserIT.screenshot;
import static dev.inspection.it.ConsoleBrowserIT.waiting;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.inspection.node.Node;
import dev.inspection.probe.PushSimulator;
import dev.inspection.probe.SimRooms;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The console's hotel pages (issue 13 item 4) in headless Chromium against a real node whose push simulator's rooms
 * push through the probe's ingest endpoint: the hotel's rooms, then one room's device with its loops, lock, faults
 * and device time — after the simulator's final reports, the frame with the newest device time.
 */
class ConsoleHotelIT {

  @Test
  void anOperatorFindsTheHotelsRoomsAndReadsARoomsMergedStatus() throws Exception {
    if (!Files.isExecutable(Path.of("/usr/bin/chromium")) || !Files.isExecutable(Path.of("/usr/bin/chromedriver"))) {
      fail("the console's browser tests drive headless Chromium: run scripts/ensure-chromium.sh (./run.sh test runs it first)");
    }
    Path shots = Path.of("target", "screenshots").toAbsolutePath();
    Files.createDirectories(shots);
    try (TestEnv env = new TestEnv(2)) {
      Node all = env.start(Map.of("role", "all", "node.id", env.name + "-hotel", "probe.sim.push.rooms", "3", "probe.sim.push.interval.ms", "300"));
      PushSimulator sim = all.pushSim();
      TestEnv.awaitTrue(Duration.ofSeconds(60), "the three rooms are stored",
          () -> env.queryLong("SELECT count(DISTINCT device_id) FROM $S.device_status_current WHERE device_id LIKE 'sim-rcu-%'") == 3);
      String base = "http://127.0.0.1:" + all.httpPort();

      ChromeDriver driver = ConsoleBrowserIT.startBrowser();
      try {
        WebDriverWait wait = waiting(driver, 30);
        driver.get(base + "/console/");
        wait.until(ExpectedConditions.urlContains("/login"));
        logIn(driver, TestEnv.CONSOLE_USER, TestEnv.CONSOLE_PASSWORD);
        wait.until(ExpectedConditions.urlContains("/console/"));

        // the Hotels page: a hotel id opens its rooms
        click(wait, By.cssSelector("a[data-nav='hotels']"));
        WebElement hotel = wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("hotel-id")));
        hotel.clear();
        hotel.sendKeys(SimRooms.HOTEL);
        click(wait, By.id("hotel-open"));
        wait.until(d -> d.findElements(By.cssSelector("tr.room-row")).size() == 3);
        assertEquals(List.of("101", "102", "103"), driver.findElements(By.cssSelector("tr.room-row")).stream().map(e -> e.getDomAttribute("data-room")).toList());
        assertNoErrorBanner(driver, "hotel");
        screenshot(driver, shots.resolve("hotel.png"));

        // a room: its RCU with six loops, the lock state and the device time
        click(wait, By.cssSelector("tr.room-row[data-room='101'] a.room-link"));
        wait.until(d -> d.findElements(By.cssSelector(".room-device[data-device='sim-rcu-101'] tr.loop-row")).size() == 6);
        assertNoErrorBanner(driver, "room");

        // the end of the run: the page shows each field of the final report (stale copies sent after it change nothing)
        sim.settle().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        long taken = sim.taken();
        TestEnv.awaitTrue(Duration.ofSeconds(90), "all taken frames written",
            () -> env.queryLong("SELECT count(*) FROM $S.device_status_history WHERE device_id LIKE 'sim-rcu-%'") == taken);
        JsonObject last = sim.rooms().finalReport("sim-rcu-101");
        String guid = last.getString("guid");
        waiting(driver, 30).until(d -> d.findElement(By.cssSelector(".room-device[data-device='sim-rcu-101'] dl.facts")).getText().contains(guid));
        String lock = driver.findElement(By.cssSelector(".room-device[data-device='sim-rcu-101'] .lock")).getText();
        assertEquals(last.getInteger("sys_lock_status") == 1 ? "locked" : "unlocked", lock);
        assertEquals(String.valueOf(last.getJsonArray("fault_list").size()),
            driver.findElement(By.cssSelector(".room-device[data-device='sim-rcu-101'] .fault-count")).getText());
        for (Object o : last.getJsonArray("device_list")) {
          JsonObject loop = (JsonObject) o;
          String key = String.format("%03d%03d%03d", loop.getInteger("dev_type"), loop.getInteger("dev_addr"), loop.getInteger("dev_loop"));
          String row = driver.findElement(By.cssSelector(".room-device[data-device='sim-rcu-101'] tr.loop-row[data-loop='" + key + "']")).getText();
          assertTrue(row.endsWith(loop.getInteger("type_h") + " " + loop.getInteger("type_l")), key + ": " + row + " against " + loop.encode());
        }
        screenshot(driver, shots.resolve("hotel-room.png"));

        // back to the hotel, and an unknown room says so
        click(wait, By.id("back-to-hotel"));
        wait.until(d -> d.findElements(By.cssSelector("tr.room-row")).size() == 3);
        driver.get(base + "/console/#/hotels/" + SimRooms.HOTEL + "/rooms/999");
        wait.until(d -> d.findElement(By.id("room-devices")).getText().contains("No device reports this room."));
      } finally {
        driver.quit();
      }
    }
  }
}
