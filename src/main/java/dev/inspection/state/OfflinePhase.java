package dev.inspection.state;

import java.util.List;

/**
 * The offline rule's state machine, after Nagios' {@code max_check_attempts}: a failing device is first
 * DOWN in a SOFT state (the failure is not confirmed yet, seed 000 §3.2's "debounce_pending"), and becomes
 * HARD once its consecutive failures reach the rule's threshold. Only the HARD transition raises the
 * "device.offline" alert; an UP check always returns to {@link #UP}, which is HARD (a recovery from a SOFT
 * DOWN is not an alert, a recovery from a HARD DOWN resolves it).
 */
public enum OfflinePhase {
  /** Up, state type HARD. */
  UP,
  /** Down, state type SOFT: failures seen, fewer than the threshold. */
  SOFT_DOWN,
  /** Down, state type HARD: the threshold was reached. */
  HARD_DOWN;

  /** The states this one may move to. Staying in the same state is not a move. */
  List<OfflinePhase> legalNext() {
    return switch (this) {
      // HARD_DOWN straight from UP when the threshold is 1
      case UP -> List.of(SOFT_DOWN, HARD_DOWN);
      case SOFT_DOWN -> List.of(HARD_DOWN, UP);
      case HARD_DOWN -> List.of(UP);
    };
  }

  public boolean canMoveTo(OfflinePhase next) {
    return next != null && legalNext().contains(next);
  }

  /** Returns {@code next} when the move is legal; otherwise throws naming both states and the legal ones. */
  public OfflinePhase transitionTo(OfflinePhase next) {
    if (!canMoveTo(next)) {
      throw new IllegalStateException("offline state " + this + " cannot move to " + next + " (legal: " + legalNext() + ")");
    }
    return next;
  }

  /** Nagios' state type: SOFT while the failure is unconfirmed, HARD otherwise. */
  public String stateType() {
    return this == SOFT_DOWN ? "SOFT" : "HARD";
  }

  public boolean down() {
    return this != UP;
  }

  public static OfflinePhase parse(String s) {
    if (s != null) {
      for (OfflinePhase v : values()) if (v.name().equals(s)) return v;
    }
    throw new IllegalArgumentException("unknown offline state " + (s == null ? "null" : "'" + s + "'")
        + " (expected one of UP, SOFT_DOWN, HARD_DOWN)");
  }
}
