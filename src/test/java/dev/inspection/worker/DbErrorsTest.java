package dev.inspection.worker;

import static dev.inspection.worker.DbErrors.Kind.OUTAGE;
import static dev.inspection.worker.DbErrors.Kind.POISON;
import static dev.inspection.worker.DbErrors.Kind.RETRY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inspection.worker.DbErrors.DbError;
import io.vertx.core.VertxException;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.ClosedConnectionException;
import java.util.List;
import org.junit.jupiter.api.Test;

class DbErrorsTest {
  @Test
  void connectionAndAvailabilityClassesAreAnOutage() {
    for (String s : List.of("08000", "08003", "08006", "08001", "08P01", "53100", "53200", "53300", "57P01", "57P02", "57P03", "58030", "XX000", "XX001")) {
      assertEquals(OUTAGE, DbErrors.classify(s), s);
    }
  }

  @Test
  void aStatementOrSchemaThatDoesNotFitTheCodeIsAnOutageNotAPoisonRow() {
    // every row would fail the same way: waiting for an operator beats dead-lettering all traffic
    for (String s : List.of("42P01", "42703", "42601", "0A000", "3F000", "25P03", "28P01", "55000", "40003")) {
      assertEquals(OUTAGE, DbErrors.classify(s), s);
    }
  }

  @Test
  void noOrAMalformedSqlStateIsAnOutage() {
    assertEquals(OUTAGE, DbErrors.classify(null));
    assertEquals(OUTAGE, DbErrors.classify(""));
    assertEquals(OUTAGE, DbErrors.classify("22"));
  }

  @Test
  void lostRacesAreRetriedNotAnOutage() {
    for (String s : List.of("40001", "40P01", "55P03", "57014")) assertEquals(RETRY, DbErrors.classify(s), s);
  }

  @Test
  void dataAndIntegrityErrorsArePoison() {
    // 22P05: \u0000 in jsonb; 22003/22008: out of range; 22001: too long; 22021: NUL in text; 23514: check; 21000: upsert hits a row twice
    for (String s : List.of("22P05", "22P02", "22003", "22008", "22001", "22021", "22023", "23505", "23502", "23503", "23514", "21000", "27000",
        "44000", "54000", "P0001", "40002")) {
      assertEquals(POISON, DbErrors.classify(s), s);
    }
  }

  @Test
  void aPostgresErrorGivesItsSqlStateAndMessageEvenWrappedInAnotherException() {
    PgException pg = new PgException("unsupported Unicode escape sequence", "ERROR", "22P05", "\\u0000 cannot be converted to text.");
    DbError e = DbErrors.of(new VertxException("transaction failed", pg));
    assertEquals(POISON, e.kind());
    assertEquals("22P05", e.sqlState());
    assertEquals("SQLSTATE 22P05: unsupported Unicode escape sequence (\\u0000 cannot be converted to text.)", e.describe());
  }

  @Test
  void aClosedConnectionOrAFailureWithoutSqlStateIsAnOutage() {
    DbError closed = DbErrors.of(ClosedConnectionException.INSTANCE);
    assertEquals(OUTAGE, closed.kind());
    assertNull(closed.sqlState());
    assertEquals(OUTAGE, DbErrors.of(new VertxException("Timeout")).kind());
    assertEquals(OUTAGE, DbErrors.of(new IllegalStateException()).kind());
    assertTrue(DbErrors.of(null).describe().startsWith("no SQLSTATE"));
  }

  @Test
  void onlyHistorysAndTheRollupsKeysRefusingARowAreAFreshDuplicate() {
    assertTrue(DbErrors.isFreshDuplicate(new VertxException("transaction failed", unique("device_status_history_c2_20261205", "device_status_history_c2_20261205_pkey"))));
    assertTrue(DbErrors.isFreshDuplicate(unique("device_status_history_c1_default", "device_status_history_c1_default_pkey")));
    assertTrue(DbErrors.isFreshDuplicate(unique("device_status_rollup_1m_20261205", "device_status_rollup_1m_20261205_pkey")));
    // another table's key, another SQLSTATE on history, no table, no PostgreSQL error at all: the batch fails as before
    assertFalse(DbErrors.isFreshDuplicate(unique("alert_event_20261205", "alert_event_20261205_pkey")));
    assertFalse(DbErrors.isFreshDuplicate(unique(null, null)));
    assertFalse(DbErrors.isFreshDuplicate(new PgException("value too long", "ERROR", "22001", null)));
    assertFalse(DbErrors.isFreshDuplicate(new PgException("null value", "ERROR", "23502", null, null, null, null, null, null, null, null, null,
        "bench", "device_status_history_c2_20261205", "device_id", null, null)));
    assertFalse(DbErrors.isFreshDuplicate(ClosedConnectionException.INSTANCE));
    assertFalse(DbErrors.isFreshDuplicate(null));
  }

  /** A unique violation as PostgreSQL reports it: the table and the constraint in their fields. */
  private static PgException unique(String table, String constraint) {
    return new PgException("duplicate key value violates unique constraint", "ERROR", "23505", "Key (device_id, cycle_id, seq, retention_class)=(d, 1, 2, 2) already exists.",
        null, null, null, null, null, null, null, null, "bench", table, null, null, constraint);
  }

  @Test
  void aMessageQuotingAWholeRowIsCut() {
    PgException pg = new PgException("new row violates check constraint", "ERROR", "23514", "Failing row contains (" + "x".repeat(70_000) + ")");
    DbError e = DbErrors.of(pg);
    assertEquals(POISON, e.kind());
    assertTrue(e.message().length() <= DbErrors.MAX_MESSAGE + 1, "message length " + e.message().length());
  }
}
