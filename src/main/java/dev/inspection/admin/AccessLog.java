package dev.inspection.admin;

import io.vertx.core.Handler;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP access log: logger {@code access}, one INFO line per request when its answer has been written, e.g. {@code GET /api/v1/devices?limit=5 200 1234B 7ms 10.0.0.9 req=…}. The same
 * values are key-value pairs (fields of a {@code log.format=json} line). Query values that look like
 * credentials are masked ({@link AccessLine}); headers are never logged.
 */
final class AccessLog implements Handler<RoutingContext> {
  private static final Logger log = LoggerFactory.getLogger("access");

  @Override
  public void handle(RoutingContext ctx) {
    if (!log.isInfoEnabled()) {
      ctx.next();
      return;
    }
    long start = System.nanoTime();
    HttpServerRequest req = ctx.request();
    String method = req.method().name();
    String target = AccessLine.target(req.path(), req.query());
    String remote = req.remoteAddress() == null ? "-" : req.remoteAddress().hostAddress();
    // when the last byte of the answer was written (as vertx-web's LoggerHandler does); addEndHandler reports the
    // keep-alive connection's later close as a failure
    ctx.addBodyEndHandler(done -> {
      long ms = (System.nanoTime() - start) / 1_000_000;
      int status = ctx.response().getStatusCode();
      long bytes = ctx.response().bytesWritten();
      Object id = ctx.get(Frontline.REQUEST_ID);
      log.atInfo().addKeyValue("method", method).addKeyValue("path", target).addKeyValue("status", status).addKeyValue("bytes", bytes)
          .addKeyValue("duration_ms", ms).addKeyValue("remote", remote).addKeyValue("request_id", id)
          .log("{} {} {} {}B {}ms {} req={}", method, target, status, bytes, ms, remote, id);
    });
    ctx.next();
  }
}
