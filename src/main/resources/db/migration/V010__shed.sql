-- V010: results a probe shed at its outbox watermarks (issue 12, D10: shed is never the same as lost).
-- One row per probe, device, minute of the check time and device priority; count is the probe's running
-- total for that key, so a report received twice or out of order keeps the greatest (idempotent).
CREATE TABLE shed_count (
  probe_id  VARCHAR(128) NOT NULL,
  device_id VARCHAR(128) NOT NULL,
  minute    TIMESTAMPTZ NOT NULL,
  priority  SMALLINT NOT NULL CHECK (priority BETWEEN 1 AND 3),
  count     BIGINT NOT NULL CHECK (count > 0),
  PRIMARY KEY (device_id, minute, priority, probe_id)
);
CREATE INDEX shed_count_minute ON shed_count (minute);
