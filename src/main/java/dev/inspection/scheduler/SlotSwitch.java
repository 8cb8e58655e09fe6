package dev.inspection.scheduler;

import dev.inspection.messaging.SlotHash;
import dev.inspection.messaging.SlotMapWindow;
import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's step at a reshard's effective time (seed 000 §3.4): every device whose {@code current_slot}
 * is not its slot under the new count is moved there ({@code current_slot} and {@code slot_id}), so the
 * fencing upsert lets only the new slot's owner write it from then on, and the new owner finds its derived
 * state (debounce, counters) under the new slot. Then the version is marked {@code switched_at}.
 *
 * <p>One transaction per {@value #SLOTS_PER_TRANSACTION} slots of the previous map (the giving slots), in the leader's term-fenced runner (a deposed
 * leader moves nothing):
 * <ol>
 *   <li>the lease rows of the giving slot and of every slot its devices can go to ({@link SlotMapWindow#candidates})
 *       are locked {@code FOR UPDATE}, in slot order, the order a batch takes them {@code FOR KEY SHARE} in: an
 *       in-flight batch of those slots commits first, and a later one waits for this switch, so the two never
 *       deadlock and no batch of the giving slot lands between the read of its devices and their move;</li>
 *   <li>the giving slot's devices are read and those whose slot under the new count differs are moved
 *       (compare-and-set on {@code current_slot}: a switch cut short by a leader change is simply run again;
 *       a giving slot already at the version is skipped);</li>
 *   <li>the giving slot and every slot that received devices get the version in {@code slot_lease.slot_map_version}
 *       and, when owned, a new epoch (owner and state kept, a {@code reshard} history row), INV-10: the owners'
 *       batches planned on what they loaded before are fenced, and each worker loads the slot again — the receiver
 *       with the moved devices' derived state, the giver knowing its slot's version, so it sends a result of the
 *       old version whose device moved on to the device's new slot ({@code ResultGuard.Forward}) instead of writing
 *       it.</li>
 * </ol>
 */
public final class SlotSwitch {
  private static final Logger log = LoggerFactory.getLogger(SlotSwitch.class);

  /** D1: in slot order, like a batch's {@code FOR KEY SHARE}; the giving slot's version tells whether it was switched already. */
  static final String LOCK = "SELECT slot_id, slot_map_version FROM slot_lease WHERE slot_id = ANY($1::int[]) ORDER BY slot_id FOR UPDATE";
  static final String DEVICES = "SELECT device_id, current_slot FROM device_status_current WHERE current_slot = ANY($1::smallint[])";
  /** Giving slots switched in one transaction: a slot's transaction waits for its in-flight batch, so one per slot took 13 s for 64 slots under load. */
  static final int SLOTS_PER_TRANSACTION = 8;
  /** Rows locked in device order first, the order a worker's batch takes them in, so a switch and a batch never deadlock. */
  static final String MOVE = """
      WITH t AS (SELECT * FROM unnest($1::varchar[], $2::smallint[], $3::smallint[]) AS u(d, os, ns)),
           locked AS (SELECT c.device_id FROM device_status_current c JOIN t ON c.device_id = t.d AND c.current_slot = t.os
                      ORDER BY c.device_id FOR UPDATE OF c)
      UPDATE device_status_current c SET current_slot = t.ns, slot_id = t.ns
      FROM t JOIN locked l ON l.device_id = t.d WHERE c.device_id = t.d RETURNING c.current_slot""";
  /** The giving slot and the receiving ones: the version, and a new epoch where owned (INV-10). */
  static final String BUMP = """
      WITH upd AS (
        UPDATE slot_lease SET slot_map_version = $2, lease_epoch = lease_epoch + CASE WHEN owner_worker_id IS NULL THEN 0 ELSE 1 END,
          updated_at = now()
        WHERE slot_id = ANY($1::int[]) RETURNING slot_id, owner_worker_id, lease_epoch, state)
      INSERT INTO slot_lease_history (slot_id, old_owner, new_owner, old_epoch, new_epoch, reason, old_state, new_state)
      SELECT slot_id, owner_worker_id, owner_worker_id, lease_epoch - 1, lease_epoch, 'reshard', state, state FROM upd
      WHERE owner_worker_id IS NOT NULL""";
  static final String MARK = "UPDATE slot_map_version SET switched_at = now() WHERE version = $1 AND switched_at IS NULL";

  /** One device to move from the slot it is in to its slot under the new count. */
  record Move(String deviceId, int from, int to) {}

  private final Function<Function<SqlConnection, Future<Integer>>, Future<Integer>> tx;

  /** @param tx runs one transaction: the leader's {@link Leadership#fenced} (a pool's {@code withTransaction} in tests) */
  public SlotSwitch(Function<Function<SqlConnection, Future<Integer>>, Future<Integer>> tx) {
    this.tx = tx;
  }

  /** The devices of a page whose {@code current_slot} is not their slot under {@code toSlots}. Pure. */
  static List<Move> moves(List<String> deviceIds, List<Integer> currentSlots, int toSlots) {
    List<Move> out = new ArrayList<>();
    for (int i = 0; i < deviceIds.size(); i++) {
      int to = SlotHash.slotOf(deviceIds.get(i), toSlots);
      if (to != currentSlots.get(i)) out.add(new Move(deviceIds.get(i), currentSlots.get(i), to));
    }
    return out;
  }

  /** The slots the moves go to, each once, in slot order. Pure. */
  static Integer[] receiving(List<Move> moves) {
    return moves.stream().map(Move::to).collect(Collectors.toCollection(TreeSet::new)).toArray(Integer[]::new);
  }

  /** The lease rows a giving slot's transaction locks: itself and every slot its devices can go to, in slot order. Pure. */
  static Integer[] locked(int giving, int fromSlots, int toSlots) {
    TreeSet<Integer> out = new TreeSet<>(SlotMapWindow.candidates(giving, fromSlots, toSlots));
    out.add(giving);
    return out.toArray(Integer[]::new);
  }

  /** Moves every remapped device of the {@code fromSlots} slots to its slot under version {@code version}'s {@code toSlots}; the number moved. */
  public Future<Long> run(long version, int fromSlots, int toSlots) {
    long t0 = System.nanoTime();
    Future<Long> chain = Future.succeededFuture(0L);
    for (int first = 0; first < fromSlots; first += SLOTS_PER_TRANSACTION) {
      List<Integer> giving = new ArrayList<>();
      for (int s = first; s < Math.min(fromSlots, first + SLOTS_PER_TRANSACTION); s++) giving.add(s);
      chain = chain.compose(sum -> slots(version, giving, fromSlots, toSlots, false).map(n -> sum + n));
    }
    return chain.compose(moved -> tx.apply(c -> c.preparedQuery(MARK).execute(Tuple.of(version)).map(r -> r.rowCount()))
        .map(x -> {
          log.info("slot map version {}: current_slot switched from {} to {} slots for {} devices in {} ms", version, fromSlots, toSlots, moved,
              (System.nanoTime() - t0) / 1_000_000);
          return moved;
        }));
  }

  /** The lease rows a transaction of several giving slots locks, in slot order. Pure. */
  static Integer[] locked(List<Integer> giving, int fromSlots, int toSlots) {
    TreeSet<Integer> out = new TreeSet<>();
    for (int g : giving) out.addAll(List.of(locked(g, fromSlots, toSlots)));
    return out.toArray(Integer[]::new);
  }

  /**
   * Moves the devices still at {@code giving} (slots a shrink retires, whose switch already ran) to their slot under
   * {@code toSlots}, in one transaction, whatever the slots' version says; the number moved. A device can be left
   * there only by a write the switch did not see; {@link SlotRetire} calls this before it deletes the slots.
   */
  Future<Long> sweep(long version, List<Integer> giving, int fromSlots, int toSlots) {
    return slots(version, giving, fromSlots, toSlots, true);
  }

  private Future<Long> slots(long version, List<Integer> giving, int fromSlots, int toSlots, boolean again) {
    return tx.apply(c -> c.preparedQuery(LOCK).execute(Tuple.of((Object) locked(giving, fromSlots, toSlots))).compose(lock -> {
      Set<Integer> due = new TreeSet<>(giving);
      if (!again) for (Row r : lock) if (r.getLong(1) >= version) due.remove((int) r.getShort(0)); // switched by an earlier run
      if (due.isEmpty()) return Future.succeededFuture(0);
      return c.preparedQuery(DEVICES).execute(Tuple.of((Object) due.stream().map(Integer::shortValue).toArray(Short[]::new))).compose(rows -> {
        List<String> ids = new ArrayList<>();
        List<Integer> at = new ArrayList<>();
        for (Row r : rows) {
          ids.add(r.getString(0));
          at.add((int) r.getShort(1));
        }
        List<Move> moves = moves(ids, at, toSlots);
        int[] count = {0};
        Future<Set<Integer>> moved = moves.isEmpty() ? Future.succeededFuture(Set.of())
            : c.preparedQuery(MOVE).execute(Tuple.of(moves.stream().map(Move::deviceId).toArray(String[]::new),
                moves.stream().map(m -> (short) m.from()).toArray(Short[]::new), moves.stream().map(m -> (short) m.to()).toArray(Short[]::new)))
                .map(done -> {
                  count[0] = done.rowCount();
                  Set<Integer> got = new TreeSet<>();
                  for (Row r : done) got.add((int) r.getShort(0));
                  return got;
                });
        return moved.compose(got -> {
          Set<Integer> bumped = new TreeSet<>(got);
          bumped.addAll(due);
          return c.preparedQuery(BUMP).execute(Tuple.of(bumped.toArray(Integer[]::new), version)).map(b -> count[0]);
        });
      });
    })).map(Integer::longValue);
  }
}
