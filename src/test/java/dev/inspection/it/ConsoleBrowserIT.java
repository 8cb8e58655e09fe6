package dev.inspection.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.inspection.messaging.Envelope;
import dev.inspection.messaging.Priority;
import dev.inspection.messaging.SlotHash;
import dev.inspection.messaging.Topology;
import dev.inspection.node.Node;
import io.vertx.core.json.JsonObject;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The console in a real browser (Debian's headless Chromium through ChromeDriver) against real nodes: a
 * scheduler, two workers and a probe with simulated devices, each with its own schema and queues. An
 * operator logs in (after a refused password), reads the slot grid (checked against slot_lease per owner
 * and state), acknowledges an alert, replays dead letters and drains a worker from its page, watching
 * both progress bars reach 100 % and the worker go OFFLINE, opens a device and waits for its history
 * chart, and is sent to the login when the session ends. Screenshots of the overview and the device page
 * (and of the dead letters and the drained worker) go to target/screenshots/.
 */
class ConsoleBrowserIT {
  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  /** Slots of this test's cluster; -Dconsole.it.slots=256 runs it at the demo's size. */
  private static final int SLOTS = Integer.getInteger("console.it.slots", 64);
  private static final String DOWN_DEVICE = "console-down-1";

  @Test
  void operatorLogsInReadsTheSlotGridDrainsAWorkerAndSeesADeviceHistory() throws Exception {
    List<String> missing = new ArrayList<>();
    if (!Files.isExecutable(CHROMIUM)) missing.add(CHROMIUM + " (Debian package chromium)");
    if (!Files.isExecutable(CHROMEDRIVER)) missing.add(CHROMEDRIVER + " (Debian package chromium-driver)");
    if (!missing.isEmpty()) {
      fail("the console's browser test drives headless Chromium, and " + String.join(" and ", missing) + (missing.size() == 1 ? " is" : " are")
          + " missing: run scripts/ensure-chromium.sh (./run.sh test runs it first)");
    }
    Path shots = Path.of("target", "screenshots").toAbsolutePath();
    Files.createDirectories(shots);

    try (TestEnv env = new TestEnv(SLOTS)) {
      Node sched = env.start(Map.of("role", "scheduler", "node.id", env.name + "-sched", "api.token", TestEnv.API_TOKEN,
          "console.user", TestEnv.CONSOLE_USER, "console.password", TestEnv.CONSOLE_PASSWORD));
      String w1 = env.name + "-w1";
      String w2 = env.name + "-w2";
      env.start(Map.of("role", "worker", "node.id", w1));
      env.start(Map.of("role", "worker", "node.id", w2));
      String probeId = env.name + "-probe";
      env.start(Map.of("role", "probe", "node.id", probeId, "probe.sim.devices", "300", "probe.interval.ms", "1000"));
      env.awaitSettled(Set.of(w1, w2), Duration.ofSeconds(60));
      TestEnv.awaitTrue(Duration.ofSeconds(60), "both workers hold slots",
          () -> env.activeOwners().containsValue(w1) && env.activeOwners().containsValue(w2));
      String base = "http://127.0.0.1:" + sched.httpPort();

      // something for the alerts and dead-letters pages: a device that fails three times (P1: offline alert)
      // and four messages no worker can read (dead-lettered as malformed)
      Topology t = env.topology();
      try (Channel ch = env.channel()) {
        ch.confirmSelect();
        AMQP.BasicProperties persistent = new AMQP.BasicProperties.Builder().deliveryMode(2).build();
        for (int i = 0; i < 4; i++) {
          ch.basicPublish(t.exchange(), t.routingKey(i % SLOTS, Priority.NORMAL), persistent, ("{not json " + i).getBytes(StandardCharsets.UTF_8));
        }
        long at = System.currentTimeMillis() - 30_000;
        int slot = SlotHash.slotOf(DOWN_DEVICE, SLOTS);
        for (int seq = 1; seq <= 3; seq++) {
          Envelope e = new Envelope(Envelope.messageId("console-it", at + seq, DOWN_DEVICE, seq), DOWN_DEVICE, slot, 1, 1, 1, "console-it", at + seq, seq,
              Instant.ofEpochMilli(at + seq), Priority.HIGH, new JsonObject().put("status", "DOWN").put("latency_ms", 1000).put("error", "timed out"));
          ch.basicPublish(t.exchange(), t.routingKey(slot, Priority.HIGH), persistent, e.toBytes());
        }
        ch.waitForConfirmsOrDie(10_000);
      }

      ChromeDriver driver = startBrowser();
      try {
        WebDriverWait wait = waiting(driver, 30);

        // 1. the console asks for a login; a wrong password is refused with a message
        driver.get(base + "/console/");
        wait.until(ExpectedConditions.urlContains("/login"));
        logIn(driver, TestEnv.CONSOLE_USER, "not-the-password-123");
        wait.until(ExpectedConditions.urlContains("failed=1"));
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("login-error")));
        logIn(driver, TestEnv.CONSOLE_USER, TestEnv.CONSOLE_PASSWORD);
        wait.until(ExpectedConditions.urlContains("/console/"));

        // 2. the overview's grid: one cell per slot, and per worker as many cells as slot_lease gives it
        wait.until(d -> d.findElements(By.cssSelector("#slot-grid .slot")).size() == SLOTS);
        List<Map<String, Long>> last = new ArrayList<>(List.of(Map.of(), Map.of()));
        try {
          waiting(driver, 45).until(d -> {
            Map<String, Long> db = dbOwners(env);
            Map<String, Long> shown = gridOwners(d);
            last.set(0, db);
            last.set(1, shown);
            // owner|state → count, read from both sides in the same round; a rebalance may move slots meanwhile
            return db.equals(shown) && db.getOrDefault(w1 + "|ACTIVE", 0L) > 0 && db.getOrDefault(w2 + "|ACTIVE", 0L) > 0
                && db.getOrDefault(w1 + "|ACTIVE", 0L) + db.getOrDefault(w2 + "|ACTIVE", 0L) == SLOTS;
          });
        } catch (org.openqa.selenium.TimeoutException e) {
          fail("the slot grid never matched slot_lease: database " + last.get(0) + ", grid " + last.get(1));
        }
        // the matching snapshot: every cell ACTIVE, each worker with exactly its slot_lease count
        Map<String, Long> matched = last.get(1);
        assertEquals((long) SLOTS, matched.entrySet().stream().filter(e -> e.getKey().endsWith("|ACTIVE")).mapToLong(Map.Entry::getValue).sum(),
            "every cell ACTIVE: " + matched);
        for (String w : List.of(w1, w2)) {
          System.out.printf("console grid: %s owns %d of %d slots in the grid and in slot_lease%n", w, matched.getOrDefault(w + "|ACTIVE", 0L), SLOTS);
        }
        // a slot's lease history, one click away
        click(wait, By.cssSelector("#slot-grid .slot[data-slot='0']"));
        wait.until(d -> !d.findElements(By.cssSelector("#slot-history table tbody tr")).isEmpty());
        wait.until(d -> !d.findElements(By.cssSelector("#workers a.worker-link")).isEmpty());
        wait.until(d -> d.findElements(By.cssSelector("#workers a.worker-link")).size() >= 2);
        wait.until(d -> !d.findElement(By.cssSelector("[data-card='rate'] .card-value")).getText().equals("—"));
        // the fleet mode the leader stored (issue 12), as a badge with its reason
        wait.until(d -> d.findElement(By.cssSelector("[data-card='fleet-mode'] .badge")).getText().equals("NORMAL"));
        // nothing shed in the last hour, and each worker's write mode (the DB-degraded mode) from its heartbeat
        wait.until(d -> d.findElement(By.cssSelector("[data-card='shed'] .card-value")).getText().equals("0"));
        wait.until(d -> d.findElements(By.cssSelector("#workers tr[data-worker] .badge[data-state='NORMAL']")).size() >= 2);
        // the results/s trend is kept by the page itself: a few refreshes make it a line
        wait.until(d -> Integer.parseInt(Objects.requireNonNullElse(d.findElement(By.id("trend-chart")).getAttribute("data-points"), "0")) >= 3);
        assertNoErrorBanner(driver, "overview");
        Path overviewPng = screenshot(driver, shots.resolve("overview.png"));

        // 3. alerts: the failing device's offline alert, acknowledged with a note
        driver.findElement(By.cssSelector("nav a[data-nav='alerts']")).click();
        String rowCss = "#alerts tr[data-device='" + DOWN_DEVICE + "'][data-alert-key='device.offline']";
        By downRow = By.cssSelector(rowCss);
        waiting(driver, 30).until(ExpectedConditions.presenceOfElementLocated(downRow));
        click(wait, By.cssSelector(rowCss + " button.ack"));
        WebElement note = wait.until(d -> d.findElement(downRow).findElement(By.cssSelector("input.ack-note")));
        note.sendKeys("looking at it");
        click(wait, By.cssSelector(rowCss + " button.ack-confirm"));
        wait.until(d -> {
          List<WebElement> acked = d.findElement(downRow).findElements(By.cssSelector(".acked"));
          return !acked.isEmpty() && acked.get(0).getText().contains("by " + TestEnv.CONSOLE_USER) && acked.get(0).getText().contains("looking at it");
        });
        assertNoErrorBanner(driver, "alerts");
        System.out.println("console alerts: " + DOWN_DEVICE + " device.offline acknowledged by " + TestEnv.CONSOLE_USER);

        // 4. dead letters: the four unreadable messages, replayed with a progress bar that reaches 100 %
        driver.findElement(By.cssSelector("nav a[data-nav='dead-letters']")).click();
        waiting(driver, 30)
            .until(d -> d.findElements(By.cssSelector("#dead-letters tr[data-state='PENDING']")).size() >= 4);
        click(wait, By.id("replay-all"));
        click(wait, By.id("replay-all-confirm"));
        waiting(driver, 30).until(d -> {
          List<WebElement> p = d.findElements(By.id("replay-progress"));
          List<WebElement> st = d.findElements(By.id("replay-state"));
          return !p.isEmpty() && "100".equals(p.get(0).getAttribute("data-percent")) && p.get(0).getText().contains("100%")
              && !st.isEmpty() && "DONE".equals(st.get(0).getAttribute("data-state"));
        });
        System.out.println("console dead letters: replay job " + driver.findElement(By.id("replay-detail")).getText());
        assertNoErrorBanner(driver, "dead letters");
        screenshot(driver, shots.resolve("dead-letters.png"));
        driver.findElement(By.cssSelector("nav a[data-nav='overview']")).click();
        wait.until(d -> d.findElements(By.cssSelector("#workers a.worker-link[data-worker='" + w1 + "']")).size() == 1);

        // 5. the worker's page from the workers table: drain, confirm, progress to 100 % and OFFLINE
        click(wait, By.cssSelector("#workers a.worker-link[data-worker='" + w1 + "']"));
        wait.until(ExpectedConditions.urlContains("#/workers/"));
        wait.until(d -> "ACTIVE".equals(d.findElement(By.id("worker-state")).getAttribute("data-state")));
        click(wait, By.id("drain"));
        click(wait, By.id("drain-confirm"));
        WebElement progress = waiting(driver, 20)
            .until(ExpectedConditions.visibilityOfElementLocated(By.id("drain-progress")));
        System.out.println("console drain: progress shown at " + progress.getAttribute("data-percent") + "%");
        List<String> seen = new ArrayList<>();
        waiting(driver, 90).until(d -> {
          WebElement p = d.findElement(By.id("drain-progress"));
          String pct = p.getAttribute("data-percent");
          if (seen.isEmpty() || !seen.get(seen.size() - 1).equals(pct)) seen.add(pct);
          String state = d.findElement(By.id("worker-state")).getAttribute("data-state");
          return "100".equals(pct) && p.getText().contains("100%") && "OFFLINE".equals(state);
        });
        System.out.println("console drain: percents shown " + seen + ", worker OFFLINE");
        assertEquals("OFFLINE", env.workerState(w1), "the database agrees: the drained worker is OFFLINE");
        assertEquals(0, env.queryLong("SELECT count(*) FROM $S.slot_lease WHERE owner_worker_id = '" + w1 + "'"), "it holds no slot");
        screenshot(driver, shots.resolve("worker.png"));

        // 5b. an inventory import runs as a job whose progress the page shows until 100 %
        driver.get(base + "/console/#/devices");
        WebElement importText = wait.until(d -> d.findElement(By.id("import-text")));
        importText.sendKeys("{\"device_id\":\"console-import-1\",\"check_type\":\"sim\"}\n{\"device_id\":\"console-import-2\",\"check_type\":\"sim\"}");
        click(wait, By.id("import"));
        wait.until(d -> "100".equals(d.findElement(By.id("import-progress")).getAttribute("data-percent")));
        assertEquals(2, env.queryLong("SELECT count(*) FROM $S.device_resource WHERE device_id LIKE 'console-import-%'"), "both devices imported");

        // 6. a device page: its history chart is drawn by uPlot on a canvas
        driver.get(base + "/console/#/devices/sim-000001");
        waiting(driver, 30).until(d -> {
          List<WebElement> canvas = d.findElements(By.cssSelector("#history-chart canvas"));
          WebElement chart = d.findElement(By.id("history-chart"));
          String points = chart.getAttribute("data-points");
          return !canvas.isEmpty() && "true".equals(chart.getAttribute("data-drawn")) && points != null && Integer.parseInt(points) >= 2;
        });
        wait.until(d -> !d.findElement(By.id("device-status")).getAttribute("data-status").isEmpty());
        assertTrue(driver.findElements(By.cssSelector("#device-history table tbody tr")).size() >= 2, "the history table lists the results");
        System.out.println("console device: sim-000001 is " + driver.findElement(By.id("device-status")).getAttribute("data-status")
            + ", chart of " + driver.findElement(By.id("history-chart")).getAttribute("data-points") + " results");
        assertNoErrorBanner(driver, "device");
        Path devicePng = screenshot(driver, shots.resolve("device.png"));

        // 7. a session that ends sends the page to the login (an API 401); logging in again returns to that page
        driver.manage().deleteAllCookies();
        waiting(driver, 15).until(ExpectedConditions.urlContains("/login"));
        logIn(driver, TestEnv.CONSOLE_USER, TestEnv.CONSOLE_PASSWORD);
        waiting(driver, 15).until(ExpectedConditions.urlContains("#/devices/sim-000001"));
        waiting(driver, 15).until(d -> "true".equals(d.findElement(By.id("history-chart")).getAttribute("data-drawn")));

        List<String> jsErrors = new ArrayList<>();
        for (LogEntry e : driver.manage().logs().get(LogType.BROWSER)) {
          // failed requests are logged by the browser itself (the wrong password's page, the 401); script errors are ours
          if (e.getLevel().intValue() >= Level.SEVERE.intValue() && !e.getMessage().contains("Failed to load resource")) jsErrors.add(e.getMessage());
        }
        assertTrue(jsErrors.isEmpty(), "no script error in the browser console: " + jsErrors);
        System.out.println("console screenshots: " + overviewPng + " " + devicePng);
      } finally {
        driver.quit();
      }
    }
  }

  /** Issue 15 item 7: a follower's console says it follows and links to the leader's console, at its advertised URL. */
  @Test
  void aFollowersConsoleLinksToTheLeadersConsole() throws Exception {
    if (!Files.isExecutable(CHROMIUM) || !Files.isExecutable(CHROMEDRIVER)) fail("run scripts/ensure-chromium.sh (./run.sh test runs it first)");
    try (TestEnv env = new TestEnv(4)) {
      String advertised = "http://leader.example.net:9443";
      Node leader = env.start(Map.of("role", "scheduler", "node.id", env.name + "-lead", "http.host", "0.0.0.0", "http.advertised.url", advertised));
      Node follower = env.start(Map.of("role", "scheduler", "node.id", env.name + "-follow"));
      ChromeDriver driver = startBrowser();
      try {
        driver.get("http://127.0.0.1:" + follower.httpPort() + "/console/");
        waiting(driver, 15).until(ExpectedConditions.urlContains("/login"));
        logIn(driver, TestEnv.CONSOLE_USER, TestEnv.CONSOLE_PASSWORD);
        waiting(driver, 15).until(ExpectedConditions.urlContains("/console/"));
        WebElement link = waiting(driver, 20).until(ExpectedConditions.presenceOfElementLocated(By.id("leader-link")));
        assertEquals(advertised + "/console/", link.getAttribute("href"));
        assertTrue(driver.findElement(By.id("follower-note")).getText().contains("follows"), driver.findElement(By.id("status-line")).getText());
        // on the leader's own console there is no such note
        driver.get("http://127.0.0.1:" + leader.httpPort() + "/console/");
        waiting(driver, 15).until(ExpectedConditions.urlContains("/login"));
        logIn(driver, TestEnv.CONSOLE_USER, TestEnv.CONSOLE_PASSWORD);
        waiting(driver, 15).until(d -> d.findElement(By.id("status-line")).getText().contains("leader"));
        assertTrue(driver.findElements(By.id("follower-note")).isEmpty(), "the leader's console is not a follower's");
      } finally {
        driver.quit();
      }
    }
  }

  /** An explicit wait that polls every 200 ms and reads again an element the page re-rendered meanwhile (every poll repaints). */
  static WebDriverWait waiting(WebDriver driver, int seconds) {
    WebDriverWait w = new WebDriverWait(driver, Duration.ofSeconds(seconds), Duration.ofMillis(200));
    w.ignoring(StaleElementReferenceException.class);
    return w;
  }

  /** Clicks an element once it is displayed and enabled, finding it again if a repaint replaced it. */
  static void click(WebDriverWait wait, By by) {
    wait.until(d -> {
      WebElement e = d.findElement(by);
      if (!e.isDisplayed() || !e.isEnabled()) return false;
      e.click();
      return true;
    });
  }

  /** The page shows API errors in a banner: none may be up. */
  static void assertNoErrorBanner(WebDriver driver, String page) {
    WebElement banner = driver.findElement(By.id("error"));
    if (banner.isDisplayed()) fail("the " + page + " page shows an error: " + banner.getText());
  }

  static ChromeDriver startBrowser() {
    ChromeOptions o = new ChromeOptions();
    o.setBinary(CHROMIUM.toFile());
    o.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000", "--disable-gpu",
        "--no-first-run", "--disable-extensions", "--disable-background-networking");
    LoggingPreferences logs = new LoggingPreferences();
    logs.enable(LogType.BROWSER, Level.ALL);
    o.setCapability("goog:loggingPrefs", logs);
    ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(new File(CHROMEDRIVER.toString())).usingAnyFreePort().build();
    return new ChromeDriver(service, o);
  }

  static void logIn(WebDriver driver, String user, String password) {
    WebElement u = new WebDriverWait(driver, Duration.ofSeconds(15)).until(ExpectedConditions.visibilityOfElementLocated(By.name("username")));
    u.clear();
    u.sendKeys(user);
    WebElement p = driver.findElement(By.name("password"));
    p.clear();
    p.sendKeys(password);
    driver.findElement(By.cssSelector("#login-form button[type='submit']")).click();
  }

  /** owner|state → number of slots, from slot_lease. */
  private static Map<String, Long> dbOwners(TestEnv env) {
    Map<String, Long> out = new TreeMap<>();
    try {
      for (Object[] r : env.query("SELECT coalesce(owner_worker_id, ''), state, count(*) FROM $S.slot_lease GROUP BY 1, 2")) {
        out.put(r[0] + "|" + r[1], ((Number) r[2]).longValue());
      }
    } catch (Exception e) {
      throw new IllegalStateException("cannot read slot_lease: " + e.getMessage(), e);
    }
    return out;
  }

  /** owner|state → number of cells, read from the grid in one script run (one consistent rendering). */
  @SuppressWarnings("unchecked")
  private static Map<String, Long> gridOwners(WebDriver d) {
    List<String> cells = (List<String>) ((JavascriptExecutor) d).executeScript(
        "return Array.from(document.querySelectorAll('#slot-grid .slot')).map(c => c.dataset.owner + '|' + c.dataset.state);");
    Map<String, Long> out = new TreeMap<>();
    for (String c : cells) out.merge(c, 1L, Long::sum);
    return out;
  }

  static Path screenshot(WebDriver driver, Path target) throws Exception {
    File f = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE);
    Files.copy(f.toPath(), target, StandardCopyOption.REPLACE_EXISTING);
    System.out.println("console screenshot: " + target);
    return target;
  }
}
