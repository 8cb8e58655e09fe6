-- Scratch schema for the database baseline of scripts/bench.sh (psql -v scratch=bench_pg, the schema's
-- name; bench.sh passes <BENCH_ID>_pg): the node's tables, created by its
-- migration src/main/resources/db/migration/V001__base.sql, and a current table prefilled with 100,000 devices, so the pgbench upserts are updates as in steady state.
-- Dropped again by scripts/bench.sh (DROP SCHEMA bench_pg CASCADE).
\if :{?scratch}
\else
  \set scratch bench_pg
\endif
\set ON_ERROR_STOP on
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS :"scratch" CASCADE;
CREATE SCHEMA :"scratch";

-- The tables come from the node's own migration, so the baseline always writes the same shape.
SET search_path TO :"scratch";
\ir ../../src/main/resources/db/migration/V001__base.sql
RESET search_path;

-- 100,000 devices named like the probe's simulated ones (sim-000000 ...), cycle 0 / seq 0.
INSERT INTO :"scratch".device_status_current
  (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id, status_payload, updated_at)
SELECT 'sim-' || lpad(g::text, 6, '0'), (g % 256)::smallint, (g % 256)::smallint, 0, 0, now(), 1,
       'bench:0:sim-' || lpad(g::text, 6, '0') || ':0', '{"check":"sim","status":"UP","latency_ms":1}'::jsonb, now()
FROM generate_series(0, 99999) AS g;
VACUUM ANALYZE :"scratch".device_status_current;
ANALYZE :"scratch".device_status_history;
CHECKPOINT;
