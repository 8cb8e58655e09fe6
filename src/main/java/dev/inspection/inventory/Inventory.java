package dev.inspection.inventory;

import dev.inspection.config.ConfigException;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Reads device lists: JSON-lines files (bulk import) and generated simulated fleets. Blocking: call off the event loop. */
public final class Inventory {
  private Inventory() {}

  /** {@code count} simulated devices {@code sim-000001..}; every 20th is critical (priority 1). */
  public static List<Device> simulated(int count, String group, long intervalMs) {
    return simulated(count, group, intervalMs, 0);
  }

  /** {@code flapPct} percent of them, spread evenly, with {@code check_spec.pattern = "flap"}. */
  public static List<Device> simulated(int count, String group, long intervalMs, int flapPct) {
    List<Device> out = new ArrayList<>(count);
    for (int i = 1; i <= count; i++) {
      boolean flaps = (long) i * flapPct / 100 != (long) (i - 1) * flapPct / 100;
      JsonObject spec = flaps ? new JsonObject().put("pattern", "flap") : new JsonObject();
      out.add(new Device(String.format("sim-%06d", i), i % 20 == 0 ? 1 : 2, group, "sim", spec, intervalMs, "default", 0));
    }
    return out;
  }

  /** One device object per line; blank lines and lines starting with # are skipped. A bad line stops start-up, naming it. */
  public static List<Device> readJsonLines(Path file, String group, long intervalMs) {
    List<String> lines;
    try {
      lines = Files.readAllLines(file);
    } catch (IOException e) {
      throw new ConfigException("cannot read probe.inventory.file " + file.toAbsolutePath() + ": " + e.getMessage());
    }
    List<Device> out = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).trim();
      if (line.isEmpty() || line.startsWith("#")) continue;
      try {
        out.add(Device.fromJson(new JsonObject(line), group, intervalMs));
      } catch (DecodeException | IllegalArgumentException | ClassCastException e) {
        throw new ConfigException("probe.inventory.file " + file + " line " + (i + 1) + ": " + e.getMessage()
            + " — fix or remove the line and start again");
      }
    }
    return out;
  }
}
