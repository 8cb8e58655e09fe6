package dev.inspection.scheduler;

import dev.inspection.messaging.SlotHash;
import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
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
      FROM t JOIN locked l ON l.device_id = t.d WHERE c.device_id = t.d""";
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
      return c.preparedQuery(MOVE).execute(Tuple.of(moves.stream().map(Move::deviceId).toArray(String[]::new),
          moves.stream().map(m -> (short) m.from()).toArray(Short[]::new), moves.stream().map(m -> (short) m.to()).toArray(Short[]::new)))
          .map(RowSet::rowCount);
    })).compose(n -> read[0] < PAGE_SIZE ? Future.succeededFuture(movedSoFar + n) : page(last[0], toSlots, movedSoFar + n));
  }
}
