package dev.inspection.scheduler;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Envelope;
import dev.inspection.messaging.Topology;
import dev.inspection.store.Rows;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dead-letter queue, made operable (D3, issue 5): every message that reaches {@code {prefix}.dead} —
 * set aside by a worker with {@code x-dead-reason}/{@code x-dead-detail}, or by the broker after the
 * delivery limit — is copied into {@code dead_letter} and acked only after the insert committed (a crash
 * in between gives at most a second copy, never a lost one). From there an operator lists them, replays
 * them (published again with confirms to the status exchange under their original routing key) or
 * discards them; a replay reports its progress as a {@link Jobs} job.
 */
public final class DeadLetterDesk {
  private static final Logger log = LoggerFactory.getLogger(DeadLetterDesk.class);

  static final String INSERT = """
      INSERT INTO dead_letter (reason, detail, queue, routing_key, body, headers)
      SELECT * FROM unnest($1::varchar[], $2::text[], $3::varchar[], $4::varchar[], $5::bytea[], $6::text[]::jsonb[])""";
  static final String LIST = """
      SELECT id, reason, detail, queue, routing_key, at, state, handled_at, handled_by, length(body) FROM dead_letter
      WHERE ($1::varchar IS NULL OR state = $1) AND ($2::varchar IS NULL OR reason = $2) ORDER BY id DESC LIMIT $3""";
  static final String COUNTS = "SELECT state, reason, count(*) FROM dead_letter GROUP BY state, reason ORDER BY state, reason";
  static final String PENDING_COUNT = "SELECT count(*), coalesce(max(id), 0) FROM dead_letter WHERE state = 'PENDING' AND ($1::bigint[] IS NULL OR id = ANY($1))";
  /**
   * One page of a replay, in id order after the last one replayed: "replay all" never holds more than a page in the heap.
   * Only letters that were pending when the job started ({@code id <= $4}): a replayed result that is dead-lettered again
   * arrives as a new, higher id and waits for the operator instead of being replayed again by the same job.
   */
  static final String PENDING_PAGE = """
      SELECT id, routing_key, body FROM dead_letter WHERE state = 'PENDING' AND ($1::bigint[] IS NULL OR id = ANY($1)) AND id > $2
      AND id <= $4 ORDER BY id LIMIT $3""";
  static final int REPLAY_PAGE = 100;
  static final String MARK = "UPDATE dead_letter SET state = $2, handled_at = now(), handled_by = $3 WHERE id = ANY($1::bigint[]) AND state = 'PENDING'";

  /** A delivered letter; {@code channel} is the one it came on, the only one its tag can be acked on. */
  private record Letter(Channel channel, long tag, String reason, String detail, String queue, String routingKey, byte[] body, JsonObject headers) {}

  private final Vertx vertx;
  private final Context context;
  private final Pool pool;
  private final Topology topology;
  private final Jobs jobs;
  private final WorkerExecutor amqp;
  private final List<Letter> buffer = new ArrayList<>();
  private final DeskConsumer consumer;
  private boolean flushing;
  private long retryTimer = -1;
  /** How soon letters whose insert failed are tried again when no new letter brings a flush sooner. */
  static final long RETRY_MS = 5_000;

  public DeadLetterDesk(Vertx vertx, Pool pool, Topology topology, Jobs jobs, String name) {
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
    this.pool = pool;
    this.topology = topology;
    this.jobs = jobs;
    this.amqp = vertx.createSharedWorkerExecutor("dead-letter-desk-" + name + "-" + System.identityHashCode(this), 1);
    this.consumer = new DeskConsumer(vertx, context, amqp, topology.deadLetterQueue(), 200, "the dead-letter queue", (ch, env, props, body) -> {
      Letter l = letter(ch, env, props, body);
      context.runOnContext(v -> {
        buffer.add(l);
        flush();
      });
    }); // letters of a channel that stopped are dropped by the next flush: the broker delivers them again
  }

  /** On every (re)connect: consume the dead-letter queue once a worker has declared it ({@link DeskConsumer}). */
  public Future<Void> connected(Connection c) {
    consumer.connected(c);
    return Future.succeededFuture();
  }

  /** Whether the desk consumes the dead-letter queue now (the {@code scheduler_desk_consuming{desk="dead_letters"}} gauge). */
  public boolean consuming() {
    return consumer.consuming();
  }

  public void connectionLost() {
    context.runOnContext(v -> buffer.clear()); // unacked: the broker keeps them for the next consumer
  }

  private static Letter letter(Channel ch, Envelope env, AMQP.BasicProperties props, byte[] body) {
    Map<String, Object> h = props.getHeaders() == null ? Map.of() : props.getHeaders();
    JsonObject headers = new JsonObject();
    h.forEach((k, v) -> headers.put(k, String.valueOf(v)));
    String reason = str(h.get("x-dead-reason"));
    String queue = str(h.get("x-original-queue"));
    String routing = str(h.get("x-original-routing-key"));
    Object deaths = h.get("x-death");
    if (reason == null && deaths instanceof List<?> list && !list.isEmpty() && list.get(0) instanceof Map<?, ?> first) {
      reason = str(first.get("reason")); // e.g. delivery_limit: the broker gave up redelivering it
      queue = str(first.get("queue"));
      if (first.get("routing-keys") instanceof List<?> keys && !keys.isEmpty()) routing = str(keys.get(0));
    }
    if (routing == null) routing = env.getRoutingKey();
    return new Letter(ch, env.getDeliveryTag(), reason == null ? "unknown" : reason, str(h.get("x-dead-detail")), queue, routing, body, headers);
  }

  private static String str(Object o) {
    return o == null ? null : o.toString();
  }

  private void flush() {
    if (flushing) return;
    Channel ch = consumer.channel();
    buffer.removeIf(l -> l.channel() != ch); // letters of a channel that is gone: the broker delivers them again
    if (buffer.isEmpty()) return;
    flushing = true;
    List<Letter> batch = new ArrayList<>(buffer);
    buffer.clear();
    int n = batch.size();
    String[] reason = new String[n];
    String[] detail = new String[n];
    String[] queue = new String[n];
    String[] routing = new String[n];
    Buffer[] body = new Buffer[n];
    String[] headers = new String[n];
    for (int i = 0; i < n; i++) {
      Letter l = batch.get(i);
      reason[i] = l.reason();
      detail[i] = l.detail();
      queue[i] = l.queue();
      routing[i] = l.routingKey();
      body[i] = Buffer.buffer(l.body());
      headers[i] = l.headers().encode();
    }
    long last = batch.get(n - 1).tag();
    Future<RowSet<Row>> stored = pool.preparedQuery(INSERT).execute(Tuple.tuple().addArrayOfString(reason).addArrayOfString(detail)
        .addArrayOfString(queue).addArrayOfString(routing).addArrayOfBuffer(body).addArrayOfString(headers));
    stored.compose(r -> amqp.executeBlocking(() -> {
          ch.basicAck(last, true); // only after the rows committed
          return null;
        }, true))
        .onComplete(ar -> {
          flushing = false;
          if (stored.failed()) {
            keepForRetry(batch, ch, stored.cause());
            return;
          }
          if (ar.failed()) log.warn("kept {} dead letter(s) but cannot ack them ({}); the broker delivers them again, so they may be kept twice", n, ar.cause().getMessage());
          else log.info("kept {} dead letter(s) for operators (reasons {})", n, Arrays.stream(reason).distinct().toList());
          flush();
        });
  }

  /**
   * The insert failed (the database away, say): the letters go back to the front of the buffer and are tried again with
   * the next flush, at the latest after {@link #RETRY_MS}. They must not merely stay unacked on the channel: the next
   * batch's {@code basicAck(multiple=true)} would ack them with it, and they would be gone without having been kept.
   * Letters of a channel that has since closed are left to the broker, which delivers them again.
   */
  private void keepForRetry(List<Letter> batch, Channel ch, Throwable cause) {
    if (ch != consumer.channel() || !ch.isOpen()) {
      log.warn("cannot keep {} dead letter(s) yet ({}); their channel closed, so the broker delivers them again", batch.size(), cause.getMessage());
      return;
    }
    buffer.addAll(0, batch);
    log.warn("cannot keep {} dead letter(s) yet ({}); trying again in {} ms, and nothing after them is acked before they are kept",
        batch.size(), cause.getMessage(), RETRY_MS);
    if (retryTimer < 0) retryTimer = vertx.setTimer(RETRY_MS, t -> {
      retryTimer = -1;
      flush();
    });
  }

  public Future<JsonObject> list(String state, String reason, int limit) {
    Future<JsonArray> rows = pool.preparedQuery(LIST).execute(Tuple.of(state, reason, limit)).map(rs -> {
      JsonArray a = new JsonArray();
      for (Row r : rs) {
        a.add(new JsonObject().put("id", r.getLong(0)).put("reason", r.getString(1)).put("detail", r.getString(2)).put("queue", r.getString(3))
            .put("routing_key", r.getString(4)).put("at", r.getOffsetDateTime(5).toString()).put("state", r.getString(6))
            .put("handled_at", Rows.iso(r, 7)).put("handled_by", r.getString(8))
            .put("bytes", r.getInteger(9)));
      }
      return a;
    });
    Future<JsonArray> counts = pool.query(COUNTS).execute().map(rs -> {
      JsonArray a = new JsonArray();
      for (Row r : rs) a.add(new JsonObject().put("state", r.getString(0)).put("reason", r.getString(1)).put("count", r.getLong(2)));
      return a;
    });
    return Future.all(rows, counts).map(v -> new JsonObject().put("dead_letters", rows.result()).put("counts", counts.result()));
  }

  /** Replays the given pending dead letters (all pending ones when {@code ids} is null) as a job, a page of {@value #REPLAY_PAGE} at a time. */
  public Future<Jobs.Job> replay(Long[] ids, String by) {
    return pool.preparedQuery(PENDING_COUNT).execute(Tuple.of((Object) ids)).map(rows -> {
      Row counted = rows.iterator().next();
      Jobs.Job job = jobs.start("dead-letter replay", counted.getLong(0).intValue());
      replayPage(job, ids, 0L, counted.getLong(1), 0, by);
      return job;
    });
  }

  private void replayPage(Jobs.Job job, Long[] ids, long after, long upTo, int done, String by) {
    pool.preparedQuery(PENDING_PAGE).execute(Tuple.of(ids, after, REPLAY_PAGE, upTo)).compose(rows -> {
      List<Object[]> page = new ArrayList<>();
      for (Row r : rows) page.add(new Object[] {r.getLong(0), r.getString(1), r.getBuffer(2).getBytes()});
      if (page.isEmpty()) {
        job.done("replayed " + done + " dead letter(s)");
        return Future.succeededFuture();
      }
      return publish(page).compose(v -> pool.preparedQuery(MARK).execute(Tuple.of(page.stream().map(l -> (Long) l[0]).toArray(Long[]::new), "REPLAYED", by)))
          .onSuccess(r -> {
            job.advance(page.size());
            replayPage(job, ids, (Long) page.get(page.size() - 1)[0], upTo, done + page.size(), by);
          }).mapEmpty();
    }).onFailure(e -> job.fail("stopped after " + done + ": " + e.getMessage()));
  }

  /** Publishes one page again with confirms under each letter's original routing key. */
  private Future<Void> publish(List<Object[]> page) {
    return amqp.executeBlocking(() -> {
      Connection connection = consumer.connection();
      if (connection == null || !connection.isOpen()) throw new IllegalStateException("no RabbitMQ connection: retry the replay when /health/ready is UP");
      Channel ch = connection.createChannel();
      try {
        ch.confirmSelect();
        for (Object[] l : page) {
          AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().deliveryMode(2)
              .headers(Map.of("x-replayed-from-dead-letter", l[0])).build();
          ch.basicPublish(topology.exchange(), (String) l[1], true, props, (byte[]) l[2]);
        }
        ch.waitForConfirmsOrDie(30_000);
      } finally {
        if (ch.isOpen()) ch.close();
      }
      return null;
    }, true);
  }

  public Future<Integer> discard(Long[] ids, String by) {
    return pool.preparedQuery(MARK).execute(Tuple.of(ids, "DISCARDED", by)).map(r -> r.rowCount());
  }

  public void close() {
    amqp.close();
  }
}
