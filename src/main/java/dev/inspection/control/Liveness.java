package dev.inspection.control;

/**
 * The liveness lock every worker holds on its own database session (a crash ends the session and frees
 * the lock, so the leader learns of it in about a second instead of waiting for heartbeats). Keyed by
 * {@code (hashtext(namespace), hashtext(worker id))}; the namespace carries the schema, so installations
 * sharing one database never see each other's workers.
 */
public final class Liveness {
  private Liveness() {}

  /** The first key of every worker's liveness lock in this schema (the second is hashtext(worker id)). */
  public static String namespace(String schema) {
    return "inspection.worker." + schema;
  }
}
