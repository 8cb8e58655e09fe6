#!/usr/bin/env bash
# What the number of rollup day partitions costs the history + rollup statement (issue 11): the statement of
# src/main/java/dev/inspection/worker/HistoryRollups.java (WRITE, read from the source), prepared in a schema migrated by
# the jar, run with EXPLAIN ANALYZE for batches of 1 and of 200 results (every device's rollup row of the minute already
# there), first with the partitions a fresh schema has and then with 90 more days (retention.rollup.days, 90 by
# default). Prints the planning and execution time of each (median of 5, after a warm-up execution in the same
# session). The planning time includes evaluating the psql-built parameter arrays (about 2.4 ms at 200 results).
# Scratch schema bench_rollparts, dropped at the end. Usage: scripts/bench/rollup-partitions.sh [path/to/node.jar]
# HISTORY_ROLLUPS=file reads the statement from another copy of HistoryRollups.java (e.g. one from git show, to compare
# with the statement before its minute bounds: that one takes 23 parameters, the bounds are 24 and 25).
set -euo pipefail
cd "$(dirname "$0")/../.."
JAR=${1:-target/node.jar}
[ -f "$JAR" ] || { echo "rollup-partitions.sh: $JAR is missing: build it first (mvn -B -q package -DskipTests)" >&2; exit 2; }
PSQL=(psql -h 127.0.0.1 -U postgres -d test -X -q -v ON_ERROR_STOP=1)
S=bench_rollparts
WORK=$(mktemp -d)
trap '"${PSQL[@]}" -c "DROP SCHEMA IF EXISTS $S CASCADE" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
"${PSQL[@]}" -c "DROP SCHEMA IF EXISTS $S CASCADE" >/dev/null 2>&1
java -jar "$JAR" migrate --pg.schema=$S --security.allow.insecure.credentials=true >"$WORK/migrate.log" 2>&1 || { cat "$WORK/migrate.log" >&2; exit 1; }
awk '/static final String WRITE = """/ { on = 1; next } on && /""";/ { sub(/""";.*/, ""); print; exit } on { print }' \
  "${HISTORY_ROLLUPS:-src/main/java/dev/inspection/worker/HistoryRollups.java}" >"$WORK/write.sql"
grep -q 'device_status_rollup_1m' "$WORK/write.sql" || { echo "rollup-partitions.sh: could not read WRITE from HistoryRollups.java" >&2; exit 1; }
BOUNDS=", :lo, :lo"
grep -q '\$25' "$WORK/write.sql" || BOUNDS=""
run() { # results -> "planning execution" medians in ms
  local n=$1 f="$WORK/run-$1.sql"
  {
    echo "SET search_path TO $S; SET plan_cache_mode = force_custom_plan;"
    echo "PREPARE w AS"; cat "$WORK/write.sql"; echo ";"
    for k in 0 1 2 3 4 5; do
      cat <<SQL
SELECT 'ARRAY[' || string_agg('1', ',') || ']::smallint[]' AS sl, 'ARRAY[' || string_agg('1', ',') || ']::bigint[]' AS ep,
  'ARRAY[' || string_agg(quote_literal('dev-' || lpad(g::text, 6, '0')), ',') || ']::varchar[]' AS d,
  'ARRAY[' || string_agg('0', ',') || ']::bigint[]' AS s, 'ARRAY[' || string_agg('$k', ',') || ']::bigint[]' AS cy,
  'ARRAY[' || string_agg(quote_literal(now()::text), ',') || ']::timestamptz[]' AS ca,
  'ARRAY[' || string_agg(quote_literal('m$k:' || g), ',') || ']::varchar[]' AS m,
  'ARRAY[' || string_agg(quote_literal('{"status":"UP","latency_ms":3}'), ',') || ']::text[]' AS p,
  'ARRAY[' || string_agg('2', ',') || ']::smallint[]' AS rc, 'ARRAY[' || string_agg('true', ',') || ']::bool[]' AS keep,
  'ARRAY[' || string_agg(quote_literal(date_trunc('minute', now())::text), ',') || ']::timestamptz[]' AS am,
  'ARRAY[' || string_agg('1', ',') || ']::int[]' AS one, 'ARRAY[' || string_agg('0', ',') || ']::int[]' AS zero,
  'ARRAY[' || string_agg(quote_literal('UP'), ',') || ']::varchar[]' AS up, 'ARRAY[' || string_agg(g::text, ',') || ']::bigint[]' AS li,
  'ARRAY[' || string_agg(quote_literal('{$k}'), ',') || ']::text[]' AS sc, 'ARRAY[' || string_agg(quote_literal('{0}'), ',') || ']::text[]' AS sq,
  quote_literal(date_trunc('minute', now())::text) || '::timestamptz' AS lo
FROM generate_series(1, $n) g \gset
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) EXECUTE w(:sl, :ep, :d, :s, :cy, :ca, :m, :p, :rc, :keep, :am, :d, :one, :zero, :zero, :up, :up, :li,
  :cy, :s, :sc, :sq, NULL$BOUNDS);
SQL
    done
  } >"$f"
  "${PSQL[@]}" -f "$f" | awk '/Planning Time/ { p[++np] = $3 } /Execution Time/ { e[++ne] = $3 }
    END { # the first execution warms the session up; the median of the other five
      for (i = 2; i <= np; i++) { pp[i - 1] = p[i]; ee[i - 1] = e[i] }
      n = np - 1; asort(pp); asort(ee); printf "%.2f %.2f", pp[int((n + 1) / 2)], ee[int((n + 1) / 2)] }'
}
report() { # label
  local parts r1 r200
  parts=$("${PSQL[@]}" -Atc "SELECT count(*) FROM pg_partition_tree('$S.device_status_rollup_1m') WHERE isleaf")
  r1=$(run 1); r200=$(run 200)
  echo "$1 ($parts rollup partitions): 1 result: planned ${r1% *} ms, ran ${r1#* } ms; 200 results: planned ${r200% *} ms, ran ${r200#* } ms"
}
report "fresh schema"
"${PSQL[@]}" -c "DO \$\$ DECLARE d date; BEGIN
  FOR d IN SELECT generate_series(current_date - 92, current_date - 3, interval '1 day')::date LOOP
    EXECUTE format('CREATE TABLE $S.device_status_rollup_1m_%s PARTITION OF $S.device_status_rollup_1m FOR VALUES FROM (%L) TO (%L)',
      to_char(d, 'YYYYMMDD'), d::timestamptz, (d + 1)::timestamptz);
  END LOOP; END \$\$"
report "90 more days"
