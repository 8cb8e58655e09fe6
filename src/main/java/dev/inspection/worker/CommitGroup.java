package dev.inspection.worker;

import dev.inspection.worker.BatchStore.Outcome;
import dev.inspection.worker.BatchStore.Part;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Group commit across slots: while {@code maxConcurrent} transactions are in flight, the batches that
 * slots hand in wait here and go together into the next transaction (up to {@code maxRows} messages).
 * At 256 slots each slot's own batch is small; one fsync for many of them is what keeps the commit
 * latency flat. Fencing stays per slot: the transaction checks every slot's lease and writes only the
 * slots still owned at their epoch. Runs on the worker's event loop.
 */
public final class CommitGroup {
  private record Waiting(Part part, Promise<Outcome> result) {}

  private final BatchStore store;
  private final int maxConcurrent;
  private final int maxRows;
  private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
  private int inFlight;

  public CommitGroup(BatchStore store, int maxConcurrent, int maxRows) {
    this.store = store;
    this.maxConcurrent = maxConcurrent;
    this.maxRows = maxRows;
  }

  public Future<Outcome> submit(int slot, long epoch, StatePlanner.Plan plan) {
    Promise<Outcome> p = Promise.promise();
    waiting.add(new Waiting(new Part(slot, epoch, plan), p));
    flush();
    return p.future();
  }

  private void flush() {
    while (inFlight < maxConcurrent && !waiting.isEmpty()) {
      List<Waiting> group = new ArrayList<>();
      int rows = 0;
      while (!waiting.isEmpty() && (group.isEmpty() || rows + waiting.peek().part().size() <= maxRows)) {
        Waiting w = waiting.poll();
        rows += w.part().size();
        group.add(w);
      }
      inFlight++;
      store.commit(group.stream().map(Waiting::part).toList()).onComplete(ar -> {
        inFlight--;
        for (Waiting w : group) {
          if (ar.succeeded()) w.result().complete(ar.result().get(w.part().slot()));
          else w.result().fail(ar.cause());
        }
        flush();
      });
    }
  }
}
