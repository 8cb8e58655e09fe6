package dev.inspection.messaging;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The deciding part of a reshard's switch (seed 000 §3.4, INV-4, issue 14 item 3 step 3), shared by probes,
 * workers and the leader. Pure: the slot map's versions (as read from {@code slot_map_version}) and the time
 * come in as arguments, times in epoch ms on one clock (the database's, as the caller reads it).
 * <ul>
 *   <li>{@link #inForce}: the version a probe stamps and hashes with at a time: before a new version's
 *       effective time the previous one, from it on the new one;</li>
 *   <li>{@link #judge}: what a worker does with a result stamped with a version: accept it and check its slot
 *       with that version's count (the version in force, or the previous one while its grace window is open,
 *       or a known version a probe with a fast clock switched to a little early), dead-letter it as
 *       {@code stale_slot_map} (an older version whose window has closed), or refresh its map first (a
 *       version it does not know yet);</li>
 *   <li>{@link #queueSlots} and {@link #retiredSlots}: the slot queues a node declares (every slot of every
 *       version still accepted or pending, so a new version's queues exist before its effective time) and the
 *       ones to drain and delete once the window is over (slots that only a retired version had);</li>
 *   <li>{@link #moved}: whether a device changes slot between two counts, and to which (the leader's
 *       {@code current_slot} switch at the effective time).</li>
 * </ul>
 * Queues are named by slot number ({@code slot.N.lane}), so a slot that exists in both versions keeps its
 * queues; the version in the envelope tells which count its device was hashed with.
 */
public final class SlotMapWindow {
  /** The reason a worker dead-letters a result of a version whose grace window has closed. */
  public static final String STALE_REASON = "stale_slot_map";

  /** One version of the map; {@code windowUntilMs} 0 for a version without a window (the seeded version 1). */
  public record Version(long version, int totalSlots, long effectiveAtMs, long windowUntilMs) {
    public Version {
      if (version < 1) throw new IllegalArgumentException("version must be >= 1, got " + version);
      if (totalSlots < 1) throw new IllegalArgumentException("totalSlots must be >= 1, got " + totalSlots);
    }
  }

  /** What a worker does with a result: {@code totalSlots} is the count to check its slot with when accepted. */
  public record Verdict(Kind kind, int totalSlots, String detail) {}

  /** ACCEPT: check its slot with the verdict's count and apply it; STALE: dead-letter; UNKNOWN: refresh the map, then judge again. */
  public enum Kind { ACCEPT, STALE, UNKNOWN }

  private final List<Version> versions;

  /** @param versions every version of the map (any order); at least one */
  public SlotMapWindow(List<Version> versions) {
    if (versions.isEmpty()) throw new IllegalArgumentException("a slot map has at least one version");
    List<Version> sorted = new ArrayList<>(versions);
    sorted.sort(Comparator.comparingLong(Version::version));
    for (int i = 1; i < sorted.size(); i++) {
      if (sorted.get(i).version() == sorted.get(i - 1).version()) throw new IllegalArgumentException("version " + sorted.get(i).version() + " twice");
    }
    this.versions = List.copyOf(sorted);
  }

  /** One version, in force from the start (a fleet that never resharded). */
  public static SlotMapWindow single(int totalSlots) {
    return new SlotMapWindow(List.of(new Version(1, totalSlots, 0, 0)));
  }

  /** The newest version whose effective time has come; the oldest when none has (a node whose clock is behind the seed's). */
  public Version inForce(long nowMs) {
    Version best = versions.get(0);
    for (Version v : versions) if (v.effectiveAtMs() <= nowMs) best = v;
    return best;
  }

  /** The newest version, pending or not. */
  public Version newest() {
    return versions.get(versions.size() - 1);
  }

  /** The version before {@code v}, or null. */
  Version previous(Version v) {
    Version prev = null;
    for (Version x : versions) if (x.version() < v.version()) prev = x;
    return prev;
  }

  /** Whether the grace window of {@code v} (results of its previous version still accepted) is open at {@code nowMs}. */
  boolean windowOpen(Version v, long nowMs) {
    return v.windowUntilMs() > nowMs;
  }

  /** What a worker does at {@code nowMs} with a result stamped {@code stamped} (0, an unstamped envelope, counts as version 1). */
  public Verdict judge(long stamped, long nowMs) {
    long version = stamped == 0 ? 1 : stamped;
    Version current = inForce(nowMs);
    Version known = find(version);
    if (known == null) {
      if (version > newest().version()) {
        return new Verdict(Kind.UNKNOWN, 0, "slot_map_version " + version + " is newer than this node's map (newest " + newest().version() + ")");
      }
      return new Verdict(Kind.STALE, 0, "slot_map_version " + version + " is not a version of this installation's slot map");
    }
    if (known.version() >= current.version()) return new Verdict(Kind.ACCEPT, known.totalSlots(), null);
    Version next = next(known);
    if (next == current && windowOpen(current, nowMs)) return new Verdict(Kind.ACCEPT, known.totalSlots(), null);
    return new Verdict(Kind.STALE, 0, "slot_map_version " + version + " (" + known.totalSlots() + " slots) was replaced by version " + current.version()
        + " (" + current.totalSlots() + " slots)" + (next == current ? ", whose grace window closed at " + current.windowUntilMs() + " ms" : "")
        + ": the probe missed the switch");
  }

  /** Every slot whose queues must exist at {@code nowMs}: those of the version in force, of a pending one and of the previous one while its window is open. */
  public int queueSlots(long nowMs) {
    Version current = inForce(nowMs);
    int most = Math.max(current.totalSlots(), newest().totalSlots());
    Version prev = previous(current);
    if (prev != null && windowOpen(current, nowMs)) most = Math.max(most, prev.totalSlots());
    return most;
  }

  /** Slots whose queues only older versions had, to drain and delete at {@code nowMs}: empty while a window is open or nothing shrank. */
  public List<Integer> retiredSlots(long nowMs) {
    Version current = inForce(nowMs);
    if (windowOpen(current, nowMs) || newest() != current) return List.of();
    int most = 0;
    for (Version v : versions) if (v.version() < current.version()) most = Math.max(most, v.totalSlots());
    List<Integer> out = new ArrayList<>();
    for (int s = current.totalSlots(); s < most; s++) out.add(s);
    return out;
  }

  /** The device's slot under {@code toSlots} when it differs from its slot under {@code fromSlots}; -1 when it stays. */
  public static int moved(String deviceId, int fromSlots, int toSlots) {
    int from = SlotHash.slotOf(deviceId, fromSlots);
    int to = SlotHash.slotOf(deviceId, toSlots);
    return from == to ? -1 : to;
  }

  /** The version numbered {@code version}, or null when this map does not hold it. */
  public Version version(long version) {
    return find(version);
  }

  /**
   * The slots a device of slot {@code slot} under {@code fromSlots} can be in under {@code toSlots}: a device
   * whose CRC is {@code c} has {@code c mod from = slot}, so {@code c mod to} is congruent to {@code slot} modulo
   * {@code gcd(from, to)} (doubling 64 to 128: {@code slot} and {@code slot + 64}). The leader's switch locks
   * these lease rows, in slot order, before it reads the slot's devices. Pure.
   */
  public static List<Integer> candidates(int slot, int fromSlots, int toSlots) {
    int g = BigInteger.valueOf(fromSlots).gcd(BigInteger.valueOf(toSlots)).intValue();
    List<Integer> out = new ArrayList<>();
    for (int t = slot % g; t < toSlots; t += g) out.add(t);
    return out;
  }

  private Version find(long version) {
    for (Version v : versions) if (v.version() == version) return v;
    return null;
  }

  private Version next(Version v) {
    for (Version x : versions) if (x.version() > v.version()) return x;
    return null;
  }
}
