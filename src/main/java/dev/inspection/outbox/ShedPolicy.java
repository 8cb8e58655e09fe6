package dev.inspection.outbox;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Which unconfirmed outbox rows to give up when the outbox outgrows its watermarks (issue 12 item 4,
 * DESIGN.md D10): low-priority rows (3) first, then normal ones (2), each oldest first; critical rows (1)
 * never — they go only when the disk itself is full and an append fails. Once over a watermark it frees
 * down to {@code target} of it, so a probe at the limit does not shed on every check. Pure.
 */
public final class ShedPolicy {
  /** The device priorities that may be shed, in shedding order. */
  static final int[] ORDER = {3, 2};

  /**
   * @param maxRows unconfirmed rows the outbox may hold (0 = no row limit)
   * @param maxBytes bytes the outbox file may use (0 = no byte limit)
   * @param minFreeBytes free bytes the disk under the outbox must keep (0 = no disk watermark)
   * @param target fraction of a limit to shed down to once over it (e.g. 0.9)
   */
  public record Limits(long maxRows, long maxBytes, long minFreeBytes, double target) {}

  /**
   * What the outbox measures: unconfirmed rows, bytes the outbox file uses, and bytes free for it (the
   * disk's usable space plus the file's own free pages, which SQLite reuses before it grows the file).
   */
  public record Usage(long rows, long bytes, long freeBytes) {}

  /** Unconfirmed rows of one priority and the bytes their bodies take. */
  public record Backlog(long rows, long bytes) {}

  private ShedPolicy() {}

  /** Rows to free by count and by bytes; both 0 below every watermark. */
  public record Excess(long rows, long bytes) {
    public boolean none() {
      return rows <= 0 && bytes <= 0;
    }
  }

  public static Excess excess(Usage u, Limits l) {
    long rows = l.maxRows() > 0 && u.rows() > l.maxRows() ? u.rows() - (long) (l.maxRows() * l.target()) : 0;
    long bytes = l.maxBytes() > 0 && u.bytes() > l.maxBytes() ? u.bytes() - (long) (l.maxBytes() * l.target()) : 0;
    if (l.minFreeBytes() > 0 && u.freeBytes() < l.minFreeBytes()) {
      bytes = Math.max(bytes, (long) (l.minFreeBytes() / l.target()) - u.freeBytes());
    }
    return new Excess(rows, bytes);
  }

  /**
   * Whether the byte watermarks still ask for room: over {@code target} of {@code maxBytes}, or under
   * {@code minFreeBytes / target} free. Confirmed rows kept for the retention are deleted, oldest first, while this
   * holds, before any unconfirmed row is shed: they are kept for the ledger, the unconfirmed ones are results.
   */
  public static boolean overByteTarget(Usage u, Limits l) {
    return l.maxBytes() > 0 && u.bytes() > (long) (l.maxBytes() * l.target())
        || l.minFreeBytes() > 0 && u.freeBytes() < (long) (l.minFreeBytes() / l.target());
  }

  /**
   * How many of the oldest unconfirmed rows of each priority to shed (priority → rows, in shedding order,
   * only priorities with something to shed). A priority is used up before the next one is touched.
   */
  public static Map<Integer, Long> plan(Usage u, Limits l, Map<Integer, Backlog> backlog) {
    Map<Integer, Long> out = new LinkedHashMap<>();
    Excess e = excess(u, l);
    long rows = e.rows();
    long bytes = e.bytes();
    for (int p : ORDER) {
      if (rows <= 0 && bytes <= 0) break;
      Backlog b = backlog.get(p);
      if (b == null || b.rows() <= 0) continue;
      long perRow = Math.max(1, b.bytes() / b.rows());
      long forBytes = bytes <= 0 ? 0 : (bytes + perRow - 1) / perRow;
      long n = Math.min(b.rows(), Math.max(rows, forBytes));
      out.put(p, n);
      rows -= n;
      bytes -= n * perRow;
    }
    return out;
  }
}
