package dev.inspection.state;

import java.util.AbstractList;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;

/**
 * A device's last results, oldest first ({@link DerivedState#ring}, what {@link Flapping} reads), held as the bits of one
 * {@code long} when there are at most 64 of them: one object of 32 bytes where the list of a full ring of 21 was two of
 * 120 (the list and its array), in every state a worker holds (a lone survivor holds a million) and in every result it
 * folds (the fold also copied the ring into a growable list first). It is a {@link List} like any other: equal to a list
 * of the same statuses in the same order, with the same hash, and immutable.
 */
final class FlapRing extends AbstractList<CheckStatus> implements RandomAccess {
  /** The most results one ring holds; a longer ring (a flap window above this) stays a plain immutable list. */
  static final int MAX = Long.SIZE;
  private static final FlapRing EMPTY = new FlapRing(0, 0);

  /** Bit i set: the i-th result, oldest first, was DOWN. */
  private final long downs;
  private final int size;

  private FlapRing(long downs, int size) {
    this.downs = downs;
    this.size = size;
  }

  /** {@code ring} as an immutable list: a ring of its statuses when it has at most {@link #MAX}; refuses a null status. */
  static List<CheckStatus> of(List<CheckStatus> ring) {
    if (ring instanceof FlapRing) return ring;
    if (ring.size() > MAX) return List.copyOf(ring);
    long downs = 0;
    int i = 0;
    for (CheckStatus s : ring) {
      if (Objects.requireNonNull(s, "a ring's status") == CheckStatus.DOWN) downs |= 1L << i;
      i++;
    }
    return i == 0 ? EMPTY : new FlapRing(downs, i);
  }

  /** {@code ring} with {@code status} appended as the newest, and its oldest dropped beyond {@code window} results. */
  static List<CheckStatus> plus(List<CheckStatus> ring, CheckStatus status, int window) {
    Objects.requireNonNull(status, "status");
    if (ring instanceof FlapRing r && window >= 1 && window <= MAX) {
      int keep = Math.min(r.size, window - 1); // the newest results kept, then this one
      long downs = keep == 0 ? 0 : r.downs >>> (r.size - keep); // a shift by 64 would shift by nothing
      if (status == CheckStatus.DOWN) downs |= 1L << keep;
      return new FlapRing(downs, keep + 1);
    }
    List<CheckStatus> next = new ArrayList<>(ring.size() + 1);
    next.addAll(ring);
    next.add(status);
    while (next.size() > window && !next.isEmpty()) next.remove(0);
    return of(next);
  }

  @Override
  public CheckStatus get(int index) {
    Objects.checkIndex(index, size);
    return (downs >>> index & 1L) != 0 ? CheckStatus.DOWN : CheckStatus.UP;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public boolean equals(Object o) {
    if (o instanceof FlapRing r) return r.size == size && r.downs == downs;
    return super.equals(o);
  }

  @Override
  public int hashCode() {
    return super.hashCode();
  }
}
