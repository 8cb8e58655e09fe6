package dev.inspection.common;

import io.vertx.core.json.JsonObject;

/** A refusal the HTTP layer maps to a status code, with a message that says what to do and optional details. */
public final class ApiError extends RuntimeException {
  public final int status;
  public final JsonObject details;

  public ApiError(int status, String message, JsonObject details) {
    super(message);
    this.status = status;
    this.details = details == null ? new JsonObject() : details;
  }

  public ApiError(int status, String message) {
    this(status, message, null);
  }
}
