package dev.inspection.worker;

import dev.inspection.state.AlertEvent;
import dev.inspection.state.DerivedState;
import dev.inspection.worker.BatchStore.Part;
import dev.inspection.worker.StatePlanner.Plan;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * How a group transaction that PostgreSQL refused with a data error is cut to find the rows at fault
 * (DESIGN.md D9). Pure. A group of several slots is halved by slot; a single slot's part by device; a
 * single device is the culprit. Halving finds one culprit among k slots of n devices in about
 * 2·log2(k) + 2·log2(n) commits (a group of 100 slots of 8 devices: about 20) instead of one commit per
 * slot and per device. A device is the unit because its rows belong together: its current row carries the
 * fold of all its results in the batch, and its derived state and alert events follow from them.
 */
final class PoisonSplit {
  private PoisonSplit() {}

  /** The two halves to commit on their own, or an empty list when {@code parts} is one device of one slot (the culprit). */
  static List<List<Part>> halves(List<Part> parts) {
    if (parts.size() > 1) {
      int mid = parts.size() / 2;
      return List.of(List.copyOf(parts.subList(0, mid)), List.copyOf(parts.subList(mid, parts.size())));
    }
    Part p = parts.get(0);
    List<String> devices = new ArrayList<>(devices(p.plan()));
    if (devices.size() <= 1) return List.of();
    int mid = devices.size() / 2;
    return List.of(
        List.of(new Part(p.slot(), p.epoch(), only(p.plan(), devices.subList(0, mid)))),
        List.of(new Part(p.slot(), p.epoch(), only(p.plan(), devices.subList(mid, devices.size())))));
  }

  /** The devices a plan writes, in its order (every planned device has exactly one current row). */
  static Set<String> devices(Plan plan) {
    Set<String> out = new LinkedHashSet<>();
    for (StatePlanner.CurrentRow c : plan.current()) out.add(c.newest().deviceId());
    return out;
  }

  /** The part of a plan that writes these devices: their current rows, history, alert events and next derived states. */
  static Plan only(Plan plan, Collection<String> devices) {
    Set<String> keep = new HashSet<>(devices);
    return filter(plan, keep::contains);
  }

  /** A plan without these devices (what was written when PostgreSQL refused them). */
  static Plan without(Plan plan, Set<String> devices) {
    if (devices.isEmpty()) return plan;
    return filter(plan, d -> !devices.contains(d));
  }

  private static Plan filter(Plan plan, Predicate<String> device) {
    List<StatePlanner.CurrentRow> current = new ArrayList<>();
    for (StatePlanner.CurrentRow c : plan.current()) if (device.test(c.newest().deviceId())) current.add(c);
    List<StatePlanner.HistoryRow> history = new ArrayList<>();
    for (StatePlanner.HistoryRow h : plan.history()) if (device.test(h.envelope().deviceId())) history.add(h);
    List<AlertEvent> events = new ArrayList<>();
    for (AlertEvent e : plan.events()) if (device.test(e.deviceId())) events.add(e);
    Map<String, DerivedState> next = new HashMap<>();
    plan.next().forEach((d, s) -> {
      if (device.test(d)) next.put(d, s);
    });
    Map<String, String> rejected = new HashMap<>();
    plan.rejected().forEach((d, why) -> {
      if (device.test(d)) rejected.put(d, why);
    });
    return new Plan(current, history, events, next, rejected);
  }
}
