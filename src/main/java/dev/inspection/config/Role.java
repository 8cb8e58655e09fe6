package dev.inspection.config;

import java.util.Locale;

/** What a node does. {@code ALL} runs the three roles in one JVM (the demo). */
public enum Role {
  PROBE, WORKER, SCHEDULER, ALL;

  public static Role parse(String s) {
    try {
      return Role.valueOf(s.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  public boolean runsProbe() {
    return this == PROBE || this == ALL;
  }

  public boolean runsWorker() {
    return this == WORKER || this == ALL;
  }

  public boolean runsScheduler() {
    return this == SCHEDULER || this == ALL;
  }
}
