package dev.inspection.common;

import java.util.function.BooleanSupplier;

/** A readiness check that can say why it fails ({@code /health/ready} shows the reason beside DOWN). */
public interface HealthCheck extends BooleanSupplier {
  /** Why the check fails now; null when it does not (or has nothing to add). */
  String reason();
}
