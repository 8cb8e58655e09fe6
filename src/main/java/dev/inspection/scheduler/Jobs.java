package dev.inspection.scheduler;

import io.vertx.core.json.JsonObject;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Long operations with progress an operator can follow (issue 5: import, dead-letter replay); drains
 * report theirs through the worker's own record. Kept in the memory of the node that runs them: the
 * last 200.
 */
public final class Jobs {
  /** One job; its state is read by the API while it runs. */
  public static final class Job {
    final long id;
    final String kind;
    final long started = System.currentTimeMillis();
    volatile long total;
    volatile long done;
    volatile String state = "RUNNING";
    volatile String message = "";

    Job(long id, String kind, long total) {
      this.id = id;
      this.kind = kind;
      this.total = total;
    }

    public long id() {
      return id;
    }

    public void advance(long n) {
      done += n;
    }

    public void done(String msg) {
      done = total;
      message = msg;
      state = "DONE";
    }

    public void fail(String msg) {
      message = msg;
      state = "FAILED";
    }

    public JsonObject toJson() {
      int percent = total == 0 ? 100 : (int) Math.min(100, 100 * done / total);
      return new JsonObject().put("id", id).put("kind", kind).put("state", state).put("total", total).put("done", done).put("percent", percent)
          .put("message", message).put("elapsed_ms", System.currentTimeMillis() - started);
    }
  }

  private final AtomicLong ids = new AtomicLong();
  private final Map<Long, Job> jobs = new LinkedHashMap<>() {
    @Override
    protected boolean removeEldestEntry(Map.Entry<Long, Job> e) {
      return size() > 200;
    }
  };

  public synchronized Job start(String kind, long total) {
    Job j = new Job(ids.incrementAndGet(), kind, total);
    jobs.put(j.id, j);
    if (total == 0) j.done("nothing to do");
    return j;
  }

  public synchronized Job get(long id) {
    return jobs.get(id);
  }
}
