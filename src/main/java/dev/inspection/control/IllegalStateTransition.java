package dev.inspection.control;

import java.util.Collection;
import java.util.stream.Collectors;

/**
 * A state machine was asked for a move its table does not allow. Thrown instead of silently accepting
 * the move because a wrong transition in the control plane (a dead worker taking slots again, a slot
 * loaded twice) is a bug to surface at once, not a state to carry along. The message names the machine,
 * both states and the legal targets, so a log line alone tells what went wrong.
 */
public final class IllegalStateTransition extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  private final String machine;
  private final String from;
  private final String to;

  public IllegalStateTransition(String machine, Enum<?> from, Enum<?> to, Collection<? extends Enum<?>> legal) {
    super(message(machine, from, to, legal));
    this.machine = machine;
    this.from = String.valueOf(from);
    this.to = String.valueOf(to);
  }

  /** e.g. "worker state". */
  public String machine() {
    return machine;
  }

  public String from() {
    return from;
  }

  public String to() {
    return to;
  }

  private static String message(String machine, Enum<?> from, Enum<?> to, Collection<? extends Enum<?>> legal) {
    String targets = legal == null || legal.isEmpty()
        ? "none"
        : legal.stream().map(Enum::name).collect(Collectors.joining(", "));
    return machine + " " + from + " cannot move to " + to + " (legal: " + targets + ")";
  }
}
