package dev.inspection.admin;

import io.vertx.core.json.JsonObject;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * A readiness check that also reports details on {@code /health/ready} (under {@code details.<check>}), such as the
 * worker's DB-degraded write mode; the details never change the status.
 */
public record DetailedCheck(BooleanSupplier check, Supplier<JsonObject> details) implements BooleanSupplier {
  @Override
  public boolean getAsBoolean() {
    return check.getAsBoolean();
  }
}
