package dev.inspection.outbox;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** A durable outbox row: what is published, under which routing key, with which message id. */
public record OutboxRow(long id, String messageId, String routingKey, byte[] body, long createdAtMs) {

  /**
   * The rows a query selecting {@code id, message_id, routing_key, body, created_at} returns for {@code params}
   * (all bound as longs), ending the outbox's read transaction; only on the outbox's thread ({@link Outbox#run}).
   */
  static List<OutboxRow> read(Connection db, String sql, long... params) throws SQLException {
    List<OutboxRow> out = new ArrayList<>();
    try (PreparedStatement ps = db.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) ps.setLong(i + 1, params[i]);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) out.add(new OutboxRow(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getBytes(4), rs.getLong(5)));
      }
    } finally {
      db.commit();
    }
    return out;
  }
}
