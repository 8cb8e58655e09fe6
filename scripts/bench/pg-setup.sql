-- Scratch schema for the database baseline of scripts/bench.sh: copies of the two tables the worker
-- writes (same columns, keys, indexes and storage options as src/main/resources/db/migration/V001__base.sql)
-- and a current table prefilled with 100,000 devices, so the pgbench upserts are updates as in steady state.
-- Dropped again by scripts/bench.sh (DROP SCHEMA bench_pg CASCADE).
\set ON_ERROR_STOP on
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS bench_pg CASCADE;
CREATE SCHEMA bench_pg;

CREATE TABLE bench_pg.device_status_current (
  device_id        VARCHAR(64) PRIMARY KEY,
  slot_id          SMALLINT NOT NULL,
  current_slot     SMALLINT NOT NULL,
  seq              BIGINT NOT NULL,
  cycle_id         BIGINT NOT NULL,
  collected_at     TIMESTAMPTZ NOT NULL,
  writer_epoch     BIGINT NOT NULL,
  message_id       VARCHAR(160) NOT NULL,
  status_payload   JSONB NOT NULL,
  derived_snapshot JSONB,
  updated_at       TIMESTAMPTZ NOT NULL DEFAULT now()
) WITH (fillfactor = 70);
CREATE INDEX ON bench_pg.device_status_current(current_slot);
ALTER TABLE bench_pg.device_status_current SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_cost_limit = 2000);

CREATE TABLE bench_pg.device_status_history (
  device_id      VARCHAR(64) NOT NULL,
  cycle_id       BIGINT NOT NULL,
  seq            BIGINT NOT NULL,
  slot_id        SMALLINT NOT NULL,
  collected_at   TIMESTAMPTZ NOT NULL,
  received_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  writer_epoch   BIGINT NOT NULL,
  message_id     VARCHAR(160) NOT NULL,
  status_payload JSONB NOT NULL,
  PRIMARY KEY (device_id, cycle_id, seq)
);
CREATE INDEX ON bench_pg.device_status_history(collected_at);

-- 100,000 devices named like the probe's simulated ones (sim-000000 ...), cycle 0 / seq 0.
INSERT INTO bench_pg.device_status_current
  (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id, status_payload, updated_at)
SELECT 'sim-' || lpad(g::text, 6, '0'), (g % 256)::smallint, (g % 256)::smallint, 0, 0, now(), 1,
       'bench:0:sim-' || lpad(g::text, 6, '0') || ':0', '{"check":"sim","status":"UP","latency_ms":1}'::jsonb, now()
FROM generate_series(0, 99999) AS g;
VACUUM ANALYZE bench_pg.device_status_current;
ANALYZE bench_pg.device_status_history;
CHECKPOINT;
