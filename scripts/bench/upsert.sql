-- pgbench script of scripts/bench.sh: one transaction = one worker batch of 200 results, the shape of
-- src/main/java/dev/inspection/worker/BatchStore.java without the platform around it:
--   1. a 200-row upsert into device_status_current, guarded by (cycle_id, seq) so only newer rows win;
--   2. a 200-row insert into device_status_history, ON CONFLICT DO NOTHING.
-- The 200 devices are spread over the 100,000 prefilled ids (stride 499, coprime to 100,000, so all
-- distinct) and sorted by device id, as the worker sorts its batches, so concurrent clients take row
-- locks in the same order. seq is the microsecond clock, so every upsert really updates.
-- The tables are named without a schema: bench.sh runs pgbench with PGOPTIONS="-c search_path=<scratch schema>".
\set base random(0, 99999)
BEGIN;
INSERT INTO device_status_current AS c
  (device_id, slot_id, current_slot, seq, cycle_id, collected_at, writer_epoch, message_id, status_payload, updated_at)
SELECT d, (n % 256)::smallint, (n % 256)::smallint, s, 1, now(), 1, 'bench:1:' || d || ':' || s,
       jsonb_build_object('check', 'sim', 'status', 'UP', 'latency_ms', n % 50), now()
FROM (SELECT n, 'sim-' || lpad(n::text, 6, '0') AS d, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS s
      FROM (SELECT (:base + g * 499) % 100000 AS n FROM generate_series(0, 199) AS g) AS ids) AS t
ORDER BY d
ON CONFLICT (device_id) DO UPDATE SET
  seq = EXCLUDED.seq, cycle_id = EXCLUDED.cycle_id, collected_at = EXCLUDED.collected_at,
  writer_epoch = EXCLUDED.writer_epoch, message_id = EXCLUDED.message_id, slot_id = EXCLUDED.slot_id,
  status_payload = EXCLUDED.status_payload, updated_at = now()
WHERE (c.cycle_id, c.seq) < (EXCLUDED.cycle_id, EXCLUDED.seq);
INSERT INTO device_status_history
  (device_id, cycle_id, seq, slot_id, collected_at, writer_epoch, message_id, status_payload)
SELECT d, 1, s, (n % 256)::smallint, now(), 1, 'bench:1:' || d || ':' || s,
       jsonb_build_object('check', 'sim', 'status', 'UP', 'latency_ms', n % 50)
FROM (SELECT n, 'sim-' || lpad(n::text, 6, '0') AS d, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS s
      FROM (SELECT (:base + g * 499) % 100000 AS n FROM generate_series(0, 199) AS g) AS ids) AS t
ORDER BY d
ON CONFLICT DO NOTHING;
END;
