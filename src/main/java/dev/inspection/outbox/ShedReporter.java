package dev.inspection.outbox;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.inspection.messaging.Topology;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the schedulers what this probe shed: its {@code shed_ledger} lines with a running count the
 * broker has not confirmed yet go as one JSON message to {@code {prefix}.shed} with a publisher confirm, and
 * are marked reported only after it. The schedulers keep the greatest count per key, so a report sent
 * twice (a lost confirm) changes nothing. The ledger is durable in the outbox file until then: a probe
 * that restarts or loses the broker reports it later.
 */
public final class ShedReporter {
  private static final Logger log = LoggerFactory.getLogger(ShedReporter.class);
  static final int MAX_ENTRIES = 1000;

  private final Vertx vertx;
  private final OutboxShed shed;
  private final Topology topology;
  private final String probeId;
  private final WorkerExecutor thread;
  private volatile Channel channel;
  private boolean reporting;

  public ShedReporter(Vertx vertx, OutboxShed shed, Topology topology, String probeId) {
    this.vertx = vertx;
    this.shed = shed;
    this.topology = topology;
    this.probeId = probeId;
    this.thread = vertx.createSharedWorkerExecutor("shed-reporter-" + System.identityHashCode(this), 1);
  }

  /** After every (re)connect (the publisher has declared the topology by then): a confirm channel of its own. */
  public Future<Void> onConnected(Connection c) {
    return thread.executeBlocking(() -> {
      Channel ch = c.createChannel();
      ch.confirmSelect();
      channel = ch;
      return null;
    }, true);
  }

  public void onLost() {
    channel = null;
  }

  /** Periodic: report what is unreported, one message of at most {@link #MAX_ENTRIES} lines per round. */
  public void report() {
    Channel ch = channel;
    if (reporting || ch == null || !ch.isOpen()) return;
    reporting = true;
    shed.unreported(MAX_ENTRIES).compose(entries -> {
      if (entries.isEmpty()) return Future.succeededFuture();
      byte[] body = message(probeId, entries).toBuffer().getBytes();
      return thread.executeBlocking(() -> {
        ch.basicPublish("", topology.shedQueue(), true, new AMQP.BasicProperties.Builder().contentType("application/json").deliveryMode(2).build(), body);
        ch.waitForConfirmsOrDie(10_000);
        return null;
      }, true).compose(v -> shed.markReported(entries)).onSuccess(v -> log.info("reported {} shed ledger line(s) to the schedulers", entries.size()));
    }).onComplete(ar -> {
      reporting = false;
      if (ar.failed()) log.warn("cannot report the shed ledger yet ({}); it stays in the outbox and goes later", ar.cause().getMessage());
    });
  }

  static JsonObject message(String probeId, List<OutboxShed.Entry> entries) {
    JsonArray a = new JsonArray();
    for (OutboxShed.Entry e : entries) {
      a.add(new JsonObject().put("device_id", e.deviceId()).put("minute", e.minuteEpochMs()).put("priority", e.priority()).put("count", e.count()));
    }
    return new JsonObject().put("schema", "shed/1").put("probe_id", probeId).put("entries", a);
  }

  public Future<Void> close() {
    Channel ch = channel;
    channel = null;
    return thread.executeBlocking(() -> {
      if (ch != null && ch.isOpen()) ch.close();
      return null;
    }, true).eventually(() -> thread.close()).mapEmpty();
  }
}
