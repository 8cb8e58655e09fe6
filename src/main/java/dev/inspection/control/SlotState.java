package dev.inspection.control;

import java.util.List;

/**
 * Life cycle of a slot's ownership during hand-over. A slot moves from one worker to another in steps
 * (MOVING, DRAINING_OLD on the old owner, LOADING_NEW on the new one) so that at no point two workers
 * consume it. The table below is the only place that says which step may follow which; the leader and the
 * workers both check against it.
 */
public enum SlotState {
  /** Nobody owns it. */
  FREE,
  /** Owned and consumed by its worker. */
  ACTIVE,
  /** Chosen for a move; the old owner still holds it but it is already leaving. */
  MOVING,
  /** The old owner stops consuming and finishes in-flight work. */
  DRAINING_OLD,
  /** The new owner (under a new epoch) loads it and starts consuming. */
  LOADING_NEW,
  /** Its owner is gone (dead, or the hand-over failed); waits to be given out again. */
  ORPHANED;

  /** The legal moves of this machine: the only place that lists them. */
  public static final TransitionTable<SlotState> TRANSITIONS = TransitionTable.of("slot state", SlotState.class, SlotState::next);

  /** The states this one may move to, in the order the design lists them. */
  List<SlotState> legalNext() {
    return TRANSITIONS.legalNext(this);
  }

  private static List<SlotState> next(SlotState s) {
    return switch (s) {
      case FREE -> List.of(LOADING_NEW);
      case ORPHANED -> List.of(LOADING_NEW, FREE);
      case LOADING_NEW -> List.of(ACTIVE, ORPHANED, DRAINING_OLD); // DRAINING_OLD: a worker that stops while loading hands it straight back
      case ACTIVE -> List.of(MOVING, ORPHANED, DRAINING_OLD);
      case MOVING -> List.of(DRAINING_OLD, LOADING_NEW, ORPHANED, ACTIVE);
      case DRAINING_OLD -> List.of(LOADING_NEW, ORPHANED);
    };
  }

  /** Whether {@code next} is a legal move from this state. X to X is not a move, so it is false. */
  public boolean canMoveTo(SlotState next) {
    return TRANSITIONS.allowed(this, next);
  }

  /** Returns {@code next} when the move is legal; otherwise throws {@link IllegalStateTransition}. */
  public SlotState transitionTo(SlotState next) {
    return TRANSITIONS.check(this, next);
  }

  /**
   * Whether entering {@code to} needs a new epoch: giving a slot to a new owner (LOADING_NEW) or taking it
   * from its owner (ORPHANED) are leader-only decisions, and the epoch bump is what fences off the previous
   * owner. Depends on {@code to} only; whether {@code from -> to} is legal at all is {@link #canMoveTo}'s
   * question, not this one's.
   */
  public static boolean bumpsEpoch(SlotState from, SlotState to) {
    return to == LOADING_NEW || to == ORPHANED;
  }

  /** States in which some worker holds the slot (its load counts somewhere, see {@link RebalancePlanner}). */
  public boolean owned() {
    return this == ACTIVE || this == MOVING || this == DRAINING_OLD || this == LOADING_NEW;
  }

  /** The state named {@code s} (surrounding blanks and case ignored); throws naming the value otherwise. */
  public static SlotState parse(String s) {
    if (s != null) {
      String name = s.trim();
      for (SlotState v : values()) if (v.name().equalsIgnoreCase(name)) return v;
    }
    throw new IllegalArgumentException("unknown slot state: " + (s == null ? "null" : "'" + s + "'"));
  }
}
