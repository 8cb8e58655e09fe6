package dev.inspection.control;

import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The legal moves of one state machine, written once: every check in Java and every allowed-from list in a
 * SQL guard is read from here, so the code and the database cannot disagree about what may follow what.
 */
public final class TransitionTable<E extends Enum<E>> {
  private final String machine;
  private final Map<E, List<E>> next;
  private final Map<E, Set<E>> previous;

  private TransitionTable(String machine, Class<E> type, Map<E, List<E>> next) {
    this.machine = machine;
    this.next = next;
    Map<E, Set<E>> prev = new EnumMap<>(type);
    for (E s : type.getEnumConstants()) prev.put(s, EnumSet.noneOf(type));
    next.forEach((from, tos) -> tos.forEach(to -> prev.get(to).add(from)));
    prev.replaceAll((k, v) -> Collections.unmodifiableSet(v));
    this.previous = prev;
  }

  /** A table from each state of {@code type} to the states it may move to, in the order the design lists them. */
  public static <E extends Enum<E>> TransitionTable<E> of(String machine, Class<E> type, Function<E, List<E>> legalNext) {
    Map<E, List<E>> next = new EnumMap<>(type);
    for (E s : type.getEnumConstants()) {
      List<E> to = List.copyOf(legalNext.apply(s));
      if (to.contains(s)) throw new IllegalArgumentException(machine + ": " + s + " lists itself; staying put is not a move");
      next.put(s, to);
    }
    return new TransitionTable<>(machine, type, next);
  }

  /** e.g. "worker state". */
  public String machine() {
    return machine;
  }

  public List<E> legalNext(E from) {
    return next.get(from);
  }

  /** Whether {@code to} may follow {@code from}. X to X is not a move, so it is false. */
  public boolean allowed(E from, E to) {
    return from != null && to != null && next.get(from).contains(to);
  }

  /** Returns {@code to} when the move is legal; otherwise throws {@link IllegalStateTransition} naming both states and the legal targets. */
  public E check(E from, E to) {
    if (!allowed(from, to)) throw new IllegalStateTransition(machine, from, to, from == null ? List.of() : next.get(from));
    return to;
  }

  /** The states from which {@code to} may be entered (for a SQL guard {@code state = ANY($n)}). */
  public Set<E> allowedFrom(E to) {
    return previous.get(to);
  }

  /** {@link #allowedFrom} as names, the form a SQL array parameter takes. */
  public String[] namesAllowedFrom(E to) {
    return previous.get(to).stream().map(Enum::name).toArray(String[]::new);
  }
}
