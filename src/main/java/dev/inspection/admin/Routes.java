package dev.inspection.admin;

import io.vertx.ext.web.Router;

/** One resource of the HTTP API: adds its routes to the router {@link HttpApi} builds. */
public interface Routes {
  void mount(Router router);
}
