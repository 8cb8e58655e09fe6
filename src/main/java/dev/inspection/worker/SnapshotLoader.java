package dev.inspection.worker;

import static dev.inspection.config.LogSetup.SLOT;

import dev.inspection.state.DerivedJson;
import dev.inspection.state.DerivedState;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * INV-10: a worker taking over a slot loads the derived state of every device of that slot before it
 * consumes, in pages in (slot, device) order (seed 000 §3.2: 1,000 rows per page). The slots a worker takes in one
 * lease read are walked together (a failover hands a survivor a hundred slots at once: one query per page for all
 * of them, not a hundred queries queued on the control pool ahead of its heartbeat), and each slot is handed over as
 * soon as its own pages are in. No derived value lives only in memory (D7): what is loaded here is exactly what the
 * previous owner committed.
 *
 * <p>Each row's derived snapshot is kept as the text PostgreSQL sent ({@code ::text}; the column is {@code json}, so it is
 * the text the worker wrote), and the slot's {@link BatchHandler} reads it into the device's {@link DerivedState} at the
 * device's first result ({@link #stateOf}, token by token: {@link DerivedJson#decode}). A loaded device is then two objects
 * (the text and its bytes) where its state is about eight (the state, its ring, instants, its rate window,
 * position and history mark): a lone worker taking a million devices over spent most of a slow slot's load in G1's young
 * pauses, each copying the states loaded since the one before (README, "Taking slots up"). The text is what a new owner
 * needs and no more: it is exactly what the previous owner committed. (Before that, a load kept every parsed JSON tree,
 * about 1,900 bytes a device, until the last page was in.)
 */
public final class SnapshotLoader {
  private static final Logger log = LoggerFactory.getLogger(SnapshotLoader.class);
  /**
   * A page: the rest of the slot being read ($1, after device $2), then the walk's slots after it ($3), in (slot, device)
   * order, at most $4 rows. Written as one condition ({@code current_slot = ANY($3) AND (current_slot, device_id) > ($1,
   * $2)}), PostgreSQL 15 estimated the two as independent although both bound the slot: near a walk's end (or in a walk
   * of high slots) it expected fewer rows than the page (921 for the 29,295 of the last 8 slots of a million devices),
   * planned a read of all of them and a sort instead of the index's order up to the limit, and each of those pages read
   * and sorted the rest of the walk (99 ms against 4 ms). Each half here is an index range with its own limit, and the
   * two merge in order: a page reads at most a page from the slots after, and from the slot being read a page or, when
   * PostgreSQL expects its rest to be smaller, that rest (one slot's devices at most), wherever it is in the walk.
   */
  static final String PAGE = """
      SELECT c.current_slot, c.device_id, c.snapshot, r.priority, r.payload_profile FROM (
        (SELECT current_slot, device_id, derived_snapshot::text AS snapshot FROM device_status_current
         WHERE current_slot = $1::smallint AND device_id > $2::varchar ORDER BY current_slot, device_id LIMIT $4)
        UNION ALL
        (SELECT current_slot, device_id, derived_snapshot::text FROM device_status_current
         WHERE current_slot = ANY($3::smallint[]) ORDER BY current_slot, device_id LIMIT $4)
      ) c LEFT JOIN device_resource r ON r.device_id = c.device_id
      ORDER BY c.current_slot, c.device_id LIMIT $4""";

  /** Where a load puts what the inventory says of each device it read ({@link DeviceDirectory#listed}); priority null: not listed. */
  @FunctionalInterface
  public interface Listings {
    Listings NONE = (deviceId, priority, profile) -> {};

    void listed(String deviceId, Short priority, String profile);
  }

  /** The map version each slot's devices were switched to ({@code slot_lease.slot_map_version}, set by a reshard's switch). */
  static final String MAP_VERSIONS = "SELECT slot_id, slot_map_version FROM slot_lease WHERE slot_id = ANY($1::smallint[])";

  /**
   * A slot's loaded state: {@code snapshots}, the stored derived snapshot of each of its devices that has one, as text
   * (read into a state at the device's first result; an unreadable one then starts the device's counters again);
   * {@code devices}, how many devices the slot holds; {@code millis}, its own load time; {@code mapVersion}, the slot map
   * version its devices were switched to, read before them; {@code pages}, the pages that held its devices (one for an
   * empty slot: the page it was finished on), and {@code waitedMillis}, how much of {@code millis} the walk spent waiting
   * for them with nothing to read (the database, or the context busy with other work) rather than reading them. The
   * slot's processor takes {@code snapshots} over as they are, and removes each text as it reads it.
   */
  public record Snapshot(int slot, Map<String, String> snapshots, int devices, long millis, long mapVersion, int pages, long waitedMillis) {
    /** Every device's state, read now from its text (an unreadable one left out, as a worker would start it again). */
    public Map<String, DerivedState> states() {
      Map<String, DerivedState> out = new HashMap<>(HashSizes.capacityFor(snapshots.size()));
      snapshots.forEach((device, text) -> {
        DerivedState s = stateOf(slot, device, text);
        if (s != null) out.put(device, s);
      });
      return out;
    }
  }

  private final Pool pool;
  private final int page;
  private final Listings listings;

  public SnapshotLoader(Pool pool, int page) {
    this(pool, page, Listings.NONE);
  }

  /** {@code listings}: told the inventory's listing of every device loaded, so the slot's first batch needs no lookup. */
  public SnapshotLoader(Pool pool, int page, Listings listings) {
    this.pool = pool;
    this.page = page;
    this.listings = listings;
  }

  public Future<Snapshot> load(int slot) {
    return load(List.of(slot)).map(all -> all.get(slot));
  }

  /** The snapshots of {@code slots} (every one of them, empty when the slot has no device yet), once all are in. */
  public Future<Map<Integer, Snapshot>> load(List<Integer> slots) {
    Map<Integer, Snapshot> all = new HashMap<>();
    return load(slots, done -> done.forEach(s -> all.put(s.slot(), s))).map(v -> all);
  }

  /**
   * Reads {@code slots} in slot order, a page at a time, and hands {@code loaded} each slot's snapshot as soon as its last
   * device is in (an empty slot too), the slots a page finished together: the first slot of a takeover consumes while
   * the rest still load (a survivor taking 256 slots of a million devices consumed nothing for 38 s when a slot waited
   * for the last page of its group of 32). Completes when every slot has been handed; fails on the first page that fails, and the slots handed
   * before it stay handed. A snapshot's {@code millis} is its own load: from the request of the page that held the
   * first of its devices (the page on which the slot before it was finished) to its hand-over.
   */
  public Future<Void> load(List<Integer> slots, Consumer<List<Snapshot>> loaded) {
    int[] order = slots.stream().mapToInt(Integer::intValue).sorted().distinct().toArray();
    Short[] keys = Arrays.stream(order).mapToObj(s -> (short) s).toArray(Short[]::new);
    Walk walk = new Walk(order, loaded, System.nanoTime());
    // the version first: a switch committed between the two reads has bumped the epoch too, so this load's batches are fenced
    return pool.preparedQuery(MAP_VERSIONS).execute(Tuple.of((Object) keys)).compose(rows -> {
      for (Row r : rows) walk.versions.put((int) r.getShort(0), r.getLong(1));
      return next((short) -1, "", walk);
    });
  }

  /**
   * Asks for the page after ({@code afterSlot}, {@code afterDevice}) and, when it is in, asks for the one after it before
   * reading its rows: PostgreSQL finds the next page while this one's snapshots are read (a page is about as much work
   * on each side), so a walk takes the longer of the two per page instead of their sum. A page's rows are read only
   * after the page before it (one context), and once reading a page has failed no later page is read.
   */
  private Future<Void> next(short afterSlot, String afterDevice, Walk walk) {
    long sent = System.nanoTime();
    return pool.preparedQuery(PAGE).execute(Tuple.of(afterSlot, afterDevice, walk.after(afterSlot), page)).compose(rows -> {
      if (walk.stopped) return Future.failedFuture("the walk stopped at an earlier page");
      walk.arrived(sent, System.nanoTime());
      Row lastRow = null;
      for (Row r : rows) lastRow = r;
      boolean end = rows.size() < page;
      Future<Void> rest = end ? Future.succeededFuture() : next(lastRow.getShort(0), lastRow.getString(1), walk);
      try {
        List<Snapshot> done = new ArrayList<>();
        for (Row r : rows) {
          short slot = r.getShort(0);
          String device = r.getString(1);
          walk.finishBefore(slot, sent, done);
          String snapshot = r.getString(2);
          if (snapshot != null) walk.snapshots.put(device, snapshot);
          walk.devices++;
          listings.listed(device, r.getShort(3), r.getString(4));
        }
        if (end) walk.finishBefore(Integer.MAX_VALUE, sent, done);
        walk.readEnd = System.nanoTime();
        if (!done.isEmpty()) walk.loaded.accept(done);
      } catch (RuntimeException e) {
        walk.stopped = true; // the page asked for meanwhile is not read
        return Future.failedFuture(e);
      }
      return rest;
    });
  }

  /** One load's walk through its slots in order: the slot being read and its devices so far. */
  private static final class Walk {
    final int[] order;
    final Consumer<List<Snapshot>> loaded;
    final Map<Integer, Long> versions = new HashMap<>();
    Map<String, String> snapshots = new HashMap<>();
    int devices;
    int at;
    long since;
    boolean stopped;
    /** When the rows of the page before were read (0 before the first). */
    long readEnd;
    /** The slot being read: its pages so far and how long the walk waited for them; the current page's wait. */
    int pages;
    long waitedNs;
    long pageWaitNs;

    Walk(int[] order, Consumer<List<Snapshot>> loaded, long start) {
      this.order = order;
      this.loaded = loaded;
      this.since = start;
    }

    /**
     * The walk's slots after {@code slot} (the one the next page continues): a page asks for these alone. With every slot
     * of the walk in {@code ANY}, PostgreSQL 15 read the index entries of every slot already passed on each page: a page
     * at the 121st of 128 slots of a million devices took 748 ms and 149,000 buffers, against 13 ms and 3,000 this way,
     * so a walk's pages cost more the further it got.
     */
    Short[] after(int slot) {
      int i = at;
      while (i < order.length && order[i] <= slot) i++;
      return Arrays.stream(order, i, order.length).mapToObj(s -> (short) s).toArray(Short[]::new);
    }

    /**
     * A page asked for at {@code sent} is in at {@code in}: the walk waited from when it had both asked for it and read the
     * page before (the next page is asked for before this one is read) until now.
     */
    void arrived(long sent, long in) {
      pageWaitNs = Math.max(0, in - Math.max(sent, readEnd));
      pages++;
      waitedNs += pageWaitNs;
    }

    /** Every slot before {@code slot} is complete: into {@code done}; the next one's load counts from the page {@code sent}. */
    void finishBefore(int slot, long sent, List<Snapshot> done) {
      while (at < order.length && order[at] < slot) {
        int s = order[at++];
        done.add(new Snapshot(s, snapshots, devices, (System.nanoTime() - since) / 1_000_000, versions.getOrDefault(s, 1L), pages,
            waitedNs / 1_000_000));
        snapshots = new HashMap<>(HashSizes.capacityFor(devices)); // a slot holds about as many devices as the one before
        devices = 0;
        since = sent;
        pages = 1; // the next slot starts on this page
        waitedNs = pageWaitNs;
      }
    }
  }

  /**
   * A device's derived state from its stored snapshot; null when it has none, or when the snapshot cannot be read, which
   * is logged: that device's counters start again (its alerts and history mark are rebuilt by its next results).
   */
  static DerivedState stateOf(int slot, String deviceId, String snapshot) {
    if (snapshot == null) return null;
    try {
      return DerivedJson.decode(snapshot);
    } catch (RuntimeException bad) {
      log.atWarn().addKeyValue(SLOT, slot).log("slot {}: device {} has an unreadable derived snapshot ({}); its counters start again", slot, deviceId, bad.getMessage());
      return null;
    }
  }
}
