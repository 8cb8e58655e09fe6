package dev.inspection.worker;

import com.rabbitmq.client.Connection;
import dev.inspection.messaging.Topology;
import dev.inspection.metrics.Metrics;
import dev.inspection.state.AlertRules;
import io.vertx.core.WorkerExecutor;
import java.time.Clock;
import java.util.Objects;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * The collaborators every {@link SlotProcessor} of a worker shares. {@code broker}: the connection when the
 * worker has a usable one, else null; {@code acks}: a single thread, so that each slot's acks run in order;
 * {@code devices}: {@link DeviceDirectory#lookup}; {@code rules}: alert rules by device priority.
 */
public record SlotServices(String workerId, Topology topology, Supplier<Connection> broker, WorkerExecutor acks, CommitGroup store,
    DeadLetterPublisher deadLetters, DbGate gate, BatchHandler.Lookup devices, IntFunction<AlertRules> rules, Metrics metrics, Clock clock,
    SlotProcessor.Listener listener) {
  public SlotServices {
    Objects.requireNonNull(workerId, "workerId");
    Objects.requireNonNull(topology, "topology");
    Objects.requireNonNull(broker, "broker");
    Objects.requireNonNull(acks, "acks");
    Objects.requireNonNull(store, "store");
    Objects.requireNonNull(deadLetters, "deadLetters");
    Objects.requireNonNull(gate, "gate");
    Objects.requireNonNull(devices, "devices");
    Objects.requireNonNull(rules, "rules");
    Objects.requireNonNull(metrics, "metrics");
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(listener, "listener");
  }
}
