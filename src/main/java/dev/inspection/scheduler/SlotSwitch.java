package dev.inspection.scheduler;

import dev.inspection.messaging.SlotHash;
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
 * <p>Pages of {@link #PAGE_SIZE} devices by {@code device_id}, each in its own transaction of the runner
 * (the leader's term-fenced one: a deposed leader moves nothing). Each move is a compare-and-set on the
 * {@code current_slot} it read, and the devices to move are decided from {@code current_slot}, not from the
 * old count, so a switch cut short by a leader change is simply run again by the next leader.
 *
 * <p>INV-10 for moved devices: a page's transaction locks the lease rows of the slots receiving its devices
 * first, then moves them, then gives each owned receiving slot a new epoch (owner and state kept, a {@code reshard}
 * history row). The owner's batch planned on what it loaded before is fenced, and the worker, seeing its slot at a
 * new epoch, drops it and loads it again, the moved devices' derived state included ({@code LeaseReconciler}).
 * Per page: a slot receiving devices in several pages is reloaded after each.
 */
public final class SlotSwitch {
  private static final Logger log = LoggerFactory.getLogger(SlotSwitch.class);

  static final int PAGE_SIZE = 1000;
  static final String PAGE = "SELECT device_id, current_slot FROM device_status_current WHERE device_id > $1 ORDER BY device_id LIMIT $2";
  /** Rows locked in device order first, the order a worker's batch takes them in, so a switch and a batch never deadlock. */
  static final String MOVE = """
      WITH t AS (SELECT * FROM unnest($1::varchar[], $2::smallint[], $3::smallint[]) AS u(d, os, ns)),
           locked AS (SELECT c.device_id FROM device_status_current c JOIN t ON c.device_id = t.d AND c.current_slot = t.os
                      ORDER BY c.device_id FOR UPDATE OF c)
      UPDATE device_status_current c SET current_slot = t.ns, slot_id = t.ns
      FROM t JOIN locked l ON l.device_id = t.d WHERE c.device_id = t.d RETURNING c.current_slot""";
  /**
   * D1: the receiving slots' lease rows are locked first, {@code FOR UPDATE}, which waits for a batch holding them
   * {@code FOR KEY SHARE}; slot order, as a batch takes them, so the two never deadlock.
   */
  static final String LOCK_RECEIVING = "SELECT slot_id FROM slot_lease WHERE slot_id = ANY($1::int[]) ORDER BY slot_id FOR UPDATE";
  /**
   * INV-10 for moved devices: every owned slot that received devices gets a new epoch (owner and state kept), so its
   * owner's in-flight batch is fenced and it loads the slot's derived state again, the moved devices' included.
   */
  static final String BUMP_RECEIVING = """
      WITH upd AS (
        UPDATE slot_lease SET lease_epoch = lease_epoch + 1, updated_at = now()
        WHERE slot_id = ANY($1::int[]) AND owner_worker_id IS NOT NULL RETURNING slot_id, owner_worker_id, lease_epoch, state)
      INSERT INTO slot_lease_history (slot_id, old_owner, new_owner, old_epoch, new_epoch, reason, old_state, new_state)
      SELECT slot_id, owner_worker_id, owner_worker_id, lease_epoch - 1, lease_epoch, 'reshard', state, state FROM upd""";
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

  /** The slots the moves go to, each once, in slot order (the order their lease rows are locked in). Pure. */
  static Integer[] receiving(List<Move> moves) {
    return moves.stream().map(Move::to).collect(Collectors.toCollection(TreeSet::new)).toArray(Integer[]::new);
  }

  /** Moves every remapped device to its slot under version {@code version}'s {@code toSlots}; the number moved. */
  public Future<Long> run(long version, int toSlots) {
    long t0 = System.nanoTime();
    return page("", toSlots, 0L).compose(moved -> tx.apply(c -> c.preparedQuery(MARK).execute(Tuple.of(version)).map(r -> r.rowCount()))
        .map(x -> {
          log.info("slot map version {}: current_slot switched to {} slots for {} devices in {} ms", version, toSlots, moved,
              (System.nanoTime() - t0) / 1_000_000);
          return moved;
        }));
  }

  private Future<Long> page(String after, int toSlots, long movedSoFar) {
    String[] last = {null};
    int[] read = {0};
    return tx.apply(c -> c.preparedQuery(PAGE).execute(Tuple.of(after, PAGE_SIZE)).compose(rows -> {
      List<String> ids = new ArrayList<>();
      List<Integer> slots = new ArrayList<>();
      for (Row r : rows) {
        ids.add(r.getString(0));
        slots.add((int) r.getShort(1));
      }
      read[0] = ids.size();
      if (!ids.isEmpty()) last[0] = ids.get(ids.size() - 1);
      List<Move> moves = moves(ids, slots, toSlots);
      if (moves.isEmpty()) return Future.succeededFuture(0);
      Integer[] receiving = receiving(moves);
      return c.preparedQuery(LOCK_RECEIVING).execute(Tuple.of(receiving))
          .compose(l -> c.preparedQuery(MOVE).execute(Tuple.of(moves.stream().map(Move::deviceId).toArray(String[]::new),
              moves.stream().map(m -> (short) m.from()).toArray(Short[]::new), moves.stream().map(m -> (short) m.to()).toArray(Short[]::new))))
          .compose(moved -> {
            Set<Integer> got = new TreeSet<>();
            for (Row r : moved) got.add((int) r.getShort(0));
            if (got.isEmpty()) return Future.succeededFuture(0);
            return c.preparedQuery(BUMP_RECEIVING).execute(Tuple.of(got.toArray(Integer[]::new))).map(b -> moved.rowCount());
          });
    })).compose(n -> read[0] < PAGE_SIZE ? Future.succeededFuture(movedSoFar + n) : page(last[0], toSlots, movedSoFar + n));
  }
}
