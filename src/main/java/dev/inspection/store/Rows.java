package dev.inspection.store;

import io.vertx.sqlclient.Row;
import java.time.OffsetDateTime;

/** Small conversions of result columns for JSON answers. */
public final class Rows {
  private Rows() {}

  /** A timestamp column as ISO-8601 text, null when the column is null. */
  public static String iso(Row r, int column) {
    OffsetDateTime t = r.getOffsetDateTime(column);
    return t == null ? null : t.toString();
  }
}
