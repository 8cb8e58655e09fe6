package dev.inspection.scheduler;

import dev.inspection.node.Config;
import dev.inspection.node.Keys;
import dev.inspection.store.Db;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.sqlclient.Pool;

/**
 * The scheduler role. For now it owns the inventory API that probes pull from; leadership, leases and
 * rebalancing come with the control-plane work (until then workers claim free slots themselves).
 */
public final class SchedulerVerticle extends VerticleBase {
  private final Config config;
  private Pool pool;
  private DeviceStore devices;
  private volatile boolean dbOk;

  public SchedulerVerticle(Config config) {
    this.config = config;
  }

  public DeviceStore devices() {
    return devices;
  }

  public boolean ready() {
    return dbOk;
  }

  @Override
  public Future<?> start() {
    pool = Db.pool(vertx, config, Math.max(2, config.getInt(Keys.PG_POOL_SIZE) / 2));
    devices = new DeviceStore(pool);
    vertx.setPeriodic(0, 2000, t -> pool.query("SELECT 1").execute().onComplete(ar -> dbOk = ar.succeeded()));
    return Future.succeededFuture();
  }

  @Override
  public Future<?> stop() {
    return pool.close();
  }
}
