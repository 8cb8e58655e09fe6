#!/usr/bin/env bash
# What a second b-tree on device_status_history costs (issue 11, migration V015), in one run on this machine:
# the history table of V004 (partitioned by retention class, then by cycle_id; here one default partition),
# prefilled with 2,000,000 rows of 100,000 devices, then 20 s of pgbench (4 clients) inserting 200-row batches
# (ON CONFLICT DO NOTHING, devices spread as the worker's batches are), once with the key alone (V015) and once
# with the key and the (device_id, collected_at DESC) index V004 had; two rounds, alternating, so drift hits both.
# Prints batches/s and rows/s of each and the ratio. Scratch schema bench_hix, dropped at the end.
# Usage: scripts/bench/history-index.sh   (PostgreSQL on 127.0.0.1:5432, database test, as the rest of the bench)
set -euo pipefail
PSQL=(psql -h 127.0.0.1 -U postgres -d test -X -q -v ON_ERROR_STOP=1)
PGB=(pgbench -h 127.0.0.1 -U postgres -n -c 4 -j 2 test)
WORK=$(mktemp -d)
trap '"${PSQL[@]}" -c "DROP SCHEMA IF EXISTS bench_hix CASCADE" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
cat >"$WORK/setup.sql" <<'SQL'
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS bench_hix CASCADE;
CREATE SCHEMA bench_hix;
CREATE TABLE bench_hix.h (
  device_id VARCHAR(64) NOT NULL, cycle_id BIGINT NOT NULL, seq BIGINT NOT NULL, retention_class SMALLINT NOT NULL,
  slot_id SMALLINT NOT NULL, collected_at TIMESTAMPTZ NOT NULL, received_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  writer_epoch BIGINT NOT NULL, message_id VARCHAR(160) NOT NULL, status_payload JSONB NOT NULL,
  PRIMARY KEY (device_id, cycle_id, seq, retention_class)) PARTITION BY LIST (retention_class);
CREATE TABLE bench_hix.h_c2 PARTITION OF bench_hix.h FOR VALUES IN (2) PARTITION BY RANGE (cycle_id);
CREATE TABLE bench_hix.h_c2_default PARTITION OF bench_hix.h_c2 DEFAULT;
CREATE SEQUENCE bench_hix.cycle;
SQL
cat >"$WORK/insert.sql" <<'SQL'
\set base random(0, 99999)
INSERT INTO bench_hix.h (device_id, cycle_id, seq, retention_class, slot_id, collected_at, writer_epoch, message_id, status_payload)
SELECT 'sim-' || lpad(((:base + g * 499) % 100000)::text, 6, '0'), c, 0, 2, 1, now(), 1, 'bench:' || c || ':' || g,
       '{"check":"sim","status":"UP","latency_ms":1}'::jsonb
FROM generate_series(1, 200) g, (SELECT nextval('bench_hix.cycle') AS c) s
ON CONFLICT DO NOTHING;
SQL
declare -A TPS
for round in 1 2; do
  for shape in key-only two-indexes; do
    "${PSQL[@]}" -f "$WORK/setup.sql"
    [ "$shape" = key-only ] || "${PSQL[@]}" -c "CREATE INDEX ON bench_hix.h (device_id, collected_at DESC)"
    "${PGB[@]}" -t 2500 -f "$WORK/insert.sql" >/dev/null 2>&1   # 4 x 2,500 batches = 2,000,000 rows first
    "${PSQL[@]}" -c "CHECKPOINT"
    tps=$("${PGB[@]}" -T 20 -f "$WORK/insert.sql" 2>&1 | awk '/^tps/ { print $3; exit }')
    echo "round $round, $shape: $(awk -v t="$tps" 'BEGIN { printf "%.1f batches/s = %.0f rows/s", t, t * 200 }')"
    TPS[$shape]=$(awk -v a="${TPS[$shape]:-0}" -v t="$tps" 'BEGIN { print a + t }')
  done
done
echo "history insert, key only / with the second index: $(awk -v a="${TPS[key-only]}" -v b="${TPS[two-indexes]}" 'BEGIN { printf "%.2f", a / b }') x the rows per second"
