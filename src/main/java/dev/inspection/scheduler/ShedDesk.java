package dev.inspection.scheduler;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.inspection.messaging.Topology;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What probes shed at their outbox watermarks, made visible (issue 12, D10): each probe's shed reports
 * ({@code {prefix}.shed}, running counts per device, minute and priority) are upserted into
 * {@code shed_count} keeping the greatest count, and acked only after that committed — a report seen twice
 * or out of order changes nothing. A report that cannot be read is acked and logged, never requeued forever.
 */
public final class ShedDesk {
  private static final Logger log = LoggerFactory.getLogger(ShedDesk.class);

  static final String UPSERT = """
      INSERT INTO shed_count (probe_id, device_id, minute, priority, count)
      SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::timestamptz[], $4::smallint[], $5::bigint[])
      ON CONFLICT (device_id, minute, priority, probe_id) DO UPDATE SET count = GREATEST(shed_count.count, EXCLUDED.count)""";
  static final String BY_DEVICE_MINUTE = """
      SELECT device_id, minute, priority, sum(count) FROM shed_count
      WHERE ($1::varchar IS NULL OR device_id = $1) AND minute >= $2 AND minute < $3
      GROUP BY device_id, minute, priority ORDER BY minute, device_id, priority LIMIT $4""";
  static final String TOTALS = """
      SELECT priority, sum(count) FROM shed_count WHERE ($1::varchar IS NULL OR device_id = $1) AND minute >= $2 AND minute < $3
      GROUP BY priority ORDER BY priority""";

  private final Context context;
  private final Pool pool;
  private final WorkerExecutor amqp;
  private final DeskConsumer consumer;

  public ShedDesk(Vertx vertx, Pool pool, Topology topology, String name) {
    this.context = vertx.getOrCreateContext();
    this.pool = pool;
    this.amqp = vertx.createSharedWorkerExecutor("shed-desk-" + name + "-" + System.identityHashCode(this), 1);
    // each report is acked on its own, on the channel it came on
    this.consumer = new DeskConsumer(vertx, context, amqp, topology.shedQueue(), 20, "the probes' shed reports",
        (ch, env, props, body) -> context.runOnContext(v -> keep(ch, env.getDeliveryTag(), body)));
  }

  /** On every (re)connect: consume the shed queue once a probe or worker has declared it ({@link DeskConsumer}). */
  public Future<Void> connected(Connection c) {
    consumer.connected(c);
    return Future.succeededFuture();
  }

  /** Whether the desk consumes the shed queue now (the {@code scheduler_desk_consuming{desk="shed"}} gauge). */
  public boolean consuming() {
    return consumer.consuming();
  }

  private void keep(Channel ch, long tag, byte[] body) {
    Tuple rows;
    int n;
    try {
      JsonObject m = Buffer.buffer(body).toJsonObject();
      String probe = m.getString("probe_id");
      JsonArray entries = m.getJsonArray("entries");
      n = entries.size();
      String[] probes = new String[n];
      String[] devices = new String[n];
      OffsetDateTime[] minutes = new OffsetDateTime[n];
      Short[] priorities = new Short[n];
      Long[] counts = new Long[n];
      for (int i = 0; i < n; i++) {
        JsonObject e = entries.getJsonObject(i);
        probes[i] = probe;
        devices[i] = e.getString("device_id");
        minutes[i] = OffsetDateTime.ofInstant(Instant.ofEpochMilli(e.getLong("minute")), ZoneOffset.UTC);
        priorities[i] = e.getInteger("priority").shortValue();
        counts[i] = e.getLong("count");
        if (probe == null || devices[i] == null || counts[i] <= 0 || priorities[i] < 1 || priorities[i] > 3) throw new IllegalArgumentException("entry " + i);
      }
      rows = Tuple.tuple().addArrayOfString(probes).addArrayOfString(devices).addArrayOfOffsetDateTime(minutes).addArrayOfShort(priorities)
          .addArrayOfLong(counts);
    } catch (RuntimeException e) {
      log.error("a shed report that cannot be read was dropped ({}): {}", e.getMessage(), new String(body, 0, Math.min(body.length, 200)));
      ack(ch, tag);
      return;
    }
    int lines = n;
    pool.preparedQuery(UPSERT).execute(rows)
        .onSuccess(r -> {
          ack(ch, tag); // only after the counts committed
          log.debug("kept {} shed ledger line(s)", lines);
        })
        .onFailure(e -> {
          log.warn("cannot keep a shed report yet ({}); it goes back to the queue", e.getMessage());
          amqp.executeBlocking(() -> {
            ch.basicNack(tag, false, true);
            return null;
          }, true);
        });
  }

  private void ack(Channel ch, long tag) {
    amqp.executeBlocking(() -> {
      ch.basicAck(tag, false);
      return null;
    }, true).onFailure(e -> log.debug("shed report ack failed: {}", e.getMessage()));
  }

  /** Shed results per device-minute and priority in [from, to) (all devices when {@code device} is null), and totals per priority. */
  public Future<JsonObject> query(String device, OffsetDateTime from, OffsetDateTime to, int limit) {
    Future<JsonArray> minutes = pool.preparedQuery(BY_DEVICE_MINUTE).execute(Tuple.of(device, from, to, limit)).map(rs -> {
      JsonArray a = new JsonArray();
      for (Row r : rs) {
        a.add(new JsonObject().put("device_id", r.getString(0)).put("minute", r.getOffsetDateTime(1).toString()).put("priority", r.getInteger(2))
            .put("shed", r.getLong(3)));
      }
      return a;
    });
    Future<JsonObject> totals = pool.preparedQuery(TOTALS).execute(Tuple.of(device, from, to)).map(rs -> {
      JsonObject t = new JsonObject();
      for (Row r : rs) t.put(Integer.toString(r.getInteger(0)), r.getLong(1));
      return t;
    });
    return Future.all(minutes, totals).map(v -> new JsonObject().put("from", from.toString()).put("to", to.toString())
        .put("by_priority", totals.result()).put("minutes", minutes.result()));
  }

  public void close() {
    amqp.close();
  }
}
