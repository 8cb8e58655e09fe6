package dev.inspection.worker;

import com.rabbitmq.client.Connection;
import dev.inspection.messaging.SlotMapWindow;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import dev.inspection.state.AlertRules;
import io.vertx.core.WorkerExecutor;
import java.lang.reflect.RecordComponent;
import java.time.Clock;
import java.util.Objects;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * The collaborators every {@link SlotProcessor} of a worker shares. {@code broker}: the connection when the
 * worker has a usable one, else null; {@code acks}: a single thread, so that each slot's acks run in order; {@code opens}:
 * the threads that open the slots' consumers (a takeover opens many at once);
 * {@code devices}: {@link DeviceDirectory#lookup}; {@code rules}: alert rules by device priority; {@code slotMap}: the
 * slot map's versions as last read ({@link SlotMapFollower}).
 */
public record SlotServices(String workerId, Topology topology, Supplier<Connection> broker, WorkerExecutor acks, WorkerExecutor opens, CommitGroup store,
    DeadLetterPublisher deadLetters, DbGate gate, BatchHandler.Lookup devices, IntFunction<AlertRules> rules, Metrics metrics, Clock clock,
    SlotProcessor.Listener listener, Supplier<SlotMapWindow> slotMap) {
  public SlotServices {
    Object[] given = {workerId, topology, broker, acks, opens, store, deadLetters, gate, devices, rules, metrics, clock, listener, slotMap};
    RecordComponent[] components = SlotServices.class.getRecordComponents(); // the same order
    for (int i = 0; i < given.length; i++) Objects.requireNonNull(given[i], components[i].getName());
  }
}
