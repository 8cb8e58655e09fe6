package dev.inspection.control;

import java.util.List;

/**
 * Life cycle of a worker as the scheduler leader sees it. The legal moves are written down here, in one
 * table, so that every caller (heartbeat handling, drain, failure detection, the admin API) goes through
 * the same check and an impossible history (a DEAD worker jumping back to ACTIVE without being
 * re-admitted) fails loudly instead of handing slots to a worker nobody vetted.
 */
public enum WorkerState {
  /** Known to the leader, has not asked for work yet. */
  REGISTERED,
  /** Getting ready (connections, caches); holds no slots yet. */
  WARMING,
  /** Takes and keeps slots. */
  ACTIVE,
  /** Handing its slots over before it leaves; keeps the ones not yet moved. */
  DRAINING,
  /** Left cleanly, or was taken out; holds nothing. */
  OFFLINE,
  /** Missed heartbeats but is not declared dead yet; keeps its slots for the grace period. */
  SUSPECTED,
  /** Declared dead; its slots are orphaned. */
  DEAD,
  /** Came back after being declared dead; alive but not trusted with slots until it warms up again. */
  QUARANTINE;

  /** The legal moves of this machine: the only place that lists them. */
  public static final TransitionTable<WorkerState> TRANSITIONS = TransitionTable.of("worker state", WorkerState.class, WorkerState::next);

  /** The states this one may move to, in the order the design lists them. */
  List<WorkerState> legalNext() {
    return TRANSITIONS.legalNext(this);
  }

  private static List<WorkerState> next(WorkerState s) {
    return switch (s) {
      case REGISTERED -> List.of(WARMING, DRAINING, OFFLINE, DEAD);
      case WARMING -> List.of(ACTIVE, DRAINING, OFFLINE, DEAD);
      case ACTIVE -> List.of(DRAINING, SUSPECTED, DEAD, OFFLINE);
      case DRAINING -> List.of(OFFLINE, DEAD);
      case SUSPECTED -> List.of(ACTIVE, DEAD, DRAINING, OFFLINE);
      case DEAD -> List.of(QUARANTINE, OFFLINE, REGISTERED);
      case QUARANTINE -> List.of(WARMING, DEAD, OFFLINE, DRAINING);
      case OFFLINE -> List.of(REGISTERED);
    };
  }

  /** Whether {@code next} is a legal move from this state. Staying put is not a move, so X to X is false. */
  public boolean canMoveTo(WorkerState next) {
    return TRANSITIONS.allowed(this, next);
  }

  /** Returns {@code next} when the move is legal; otherwise throws {@link IllegalStateTransition}. */
  public WorkerState transitionTo(WorkerState next) {
    return TRANSITIONS.check(this, next);
  }

  /** States in which a worker may keep its slots (and keep consuming them). */
  public boolean consumes() {
    return this == ACTIVE || this == DRAINING || this == SUSPECTED;
  }

  /** States of a process believed to be running, whether or not it holds slots. */
  public boolean live() {
    return this != OFFLINE && this != DEAD;
  }

  /** The state named {@code s} (surrounding blanks and case ignored); throws naming the value otherwise. */
  public static WorkerState parse(String s) {
    if (s != null) {
      String name = s.trim();
      for (WorkerState w : values()) if (w.name().equalsIgnoreCase(name)) return w;
    }
    throw new IllegalArgumentException("unknown worker state: " + (s == null ? "null" : "'" + s + "'"));
  }
}
