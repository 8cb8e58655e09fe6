-- V004: device state (issue 4; seed 000 §3.2, §3.3, §6.4, §6.5; DESIGN.md D4, D5, D7).

-- History partitioned by retention class (1 = critical devices, on the high queue; 2 = the others) and by
-- day of cycle_id (epoch ms of the check), so retention drops whole partitions and never DELETEs
-- (INV-20). The key still holds (device_id, cycle_id, seq): a redelivery or replay is ignored, and the
-- rows an insert really added are exactly the genuinely new results (D4: history is the dedup ledger;
-- retention is never shorter than 7 days, longer than any redelivery or outbox replay window).
ALTER TABLE device_status_history RENAME TO device_status_history_v1;
ALTER TABLE device_status_history_v1 RENAME CONSTRAINT device_status_history_pkey TO device_status_history_v1_pkey;
ALTER INDEX idx_dsh_collected RENAME TO idx_dsh_v1_collected;
CREATE TABLE device_status_history (
  device_id       VARCHAR(64) NOT NULL,
  cycle_id        BIGINT NOT NULL,
  seq             BIGINT NOT NULL,
  retention_class SMALLINT NOT NULL,
  slot_id         SMALLINT NOT NULL,
  collected_at    TIMESTAMPTZ NOT NULL,
  received_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  writer_epoch    BIGINT NOT NULL,
  message_id      VARCHAR(160) NOT NULL,
  status_payload  JSONB NOT NULL,
  PRIMARY KEY (device_id, cycle_id, seq, retention_class)
) PARTITION BY LIST (retention_class);
CREATE TABLE device_status_history_c1 PARTITION OF device_status_history FOR VALUES IN (1) PARTITION BY RANGE (cycle_id);
CREATE TABLE device_status_history_c2 PARTITION OF device_status_history FOR VALUES IN (2) PARTITION BY RANGE (cycle_id);
-- rows outside every day partition (a clock far off) land here instead of failing the batch; the
-- partition keeper reports them
CREATE TABLE device_status_history_c1_default PARTITION OF device_status_history_c1 DEFAULT;
CREATE TABLE device_status_history_c2_default PARTITION OF device_status_history_c2 DEFAULT;
CREATE INDEX idx_dsh_device_collected ON device_status_history (device_id, collected_at DESC);

-- Alert events by day of cycle_id; the unique key (device, alert_key, cycle_id, seq) makes every event
-- idempotent (seed 000 §3.3).
DROP TABLE alert_event;
CREATE TABLE alert_event (
  event_id            BIGSERIAL,
  device_id           VARCHAR(64) NOT NULL,
  alert_key           VARCHAR(128) NOT NULL,
  event_type          VARCHAR(16) NOT NULL,
  severity            SMALLINT NOT NULL,
  event_time          TIMESTAMPTZ NOT NULL,
  cycle_id            BIGINT NOT NULL,
  seq                 BIGINT NOT NULL,
  payload             JSONB NOT NULL,
  ingest_writer_epoch BIGINT NOT NULL,
  PRIMARY KEY (event_id, cycle_id),
  UNIQUE (device_id, alert_key, cycle_id, seq)
) PARTITION BY RANGE (cycle_id);
CREATE TABLE alert_event_default PARTITION OF alert_event DEFAULT;
CREATE INDEX idx_ae_device_key_time ON alert_event (device_id, alert_key, event_time DESC);
CREATE INDEX idx_alert_current_state ON alert_current (state, severity DESC);

-- The history key replaces seed 000 §3.6's message_dedup (whose key held the processing time, so a
-- redelivery at another moment was not recognised).
DROP TABLE message_dedup;

-- Rollups count only results the history insert really added (D4). last_* follow the newest result.
ALTER TABLE device_status_rollup_1m
  ADD COLUMN down_count INT NOT NULL DEFAULT 0,
  ADD COLUMN last_cycle_id BIGINT,
  ADD COLUMN last_seq BIGINT;

-- Day partitions around now; the scheduler's partition keeper creates the next ones ahead of time and
-- drops those past retention. Existing history moves into the new table.
DO $$
DECLARE
  d date;
  lo bigint;
  hi bigint;
BEGIN
  FOR d IN SELECT generate_series(current_date - 1, current_date + 3, interval '1 day')::date LOOP
    lo := (extract(epoch FROM (d::timestamp AT TIME ZONE 'UTC')) * 1000)::bigint;
    hi := lo + 86400000;
    EXECUTE format('CREATE TABLE device_status_history_c1_%s PARTITION OF device_status_history_c1 FOR VALUES FROM (%s) TO (%s)', to_char(d, 'YYYYMMDD'), lo, hi);
    EXECUTE format('CREATE TABLE device_status_history_c2_%s PARTITION OF device_status_history_c2 FOR VALUES FROM (%s) TO (%s)', to_char(d, 'YYYYMMDD'), lo, hi);
    EXECUTE format('CREATE TABLE alert_event_%s PARTITION OF alert_event FOR VALUES FROM (%s) TO (%s)', to_char(d, 'YYYYMMDD'), lo, hi);
    EXECUTE format('CREATE TABLE device_status_rollup_1m_%s PARTITION OF device_status_rollup_1m FOR VALUES FROM (%L) TO (%L)',
                   to_char(d, 'YYYYMMDD'), d::timestamp AT TIME ZONE 'UTC', (d + 1)::timestamp AT TIME ZONE 'UTC');
  END LOOP;
END $$;

INSERT INTO device_status_history (device_id, cycle_id, seq, retention_class, slot_id, collected_at, received_at, writer_epoch, message_id, status_payload)
SELECT device_id, cycle_id, seq, 2, slot_id, collected_at, received_at, writer_epoch, message_id, status_payload FROM device_status_history_v1;
DROP TABLE device_status_history_v1;

-- Merge rules (D5): the profile a device's current payload is merged with, and the rules of every
-- profile, written by the workers at start from the code (one source of truth), read by the upsert.
ALTER TABLE device_status_current ADD COLUMN payload_profile VARCHAR(32) NOT NULL DEFAULT 'default';
CREATE TABLE payload_profile (
  name         VARCHAR(32) PRIMARY KEY,
  rules        JSONB NOT NULL,
  default_rule VARCHAR(16) NOT NULL
);
